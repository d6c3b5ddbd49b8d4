#include "gx_symbols.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef char *(*demangle_fn)(const char *mangled, char *buffer, size_t *length, int *status);
static demangle_fn cxa_demangle;
static pthread_once_t demangle_once = PTHREAD_ONCE_INIT;

static void load_demangler(void)
{
    /* already in the process when something linked the C++ runtime; else the system's copy */
    cxa_demangle = (demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");
    if (!cxa_demangle) {
        void *handle = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL);
        if (handle)
            cxa_demangle = (demangle_fn)dlsym(handle, "__cxa_demangle");
    }
}

char *gx_demangle(const char *symbol)
{
    if (strncmp(symbol, "_Z", 2) != 0)
        return NULL;
    pthread_once(&demangle_once, load_demangler);
    if (!cxa_demangle)
        return NULL;
    int status = 0;
    char *text = cxa_demangle(symbol, NULL, NULL, &status);
    if (status != 0) {
        free(text);
        return NULL;
    }
    return text;
}

/* Cuts "void ns::k<float, 128>(float*, int)" to "ns::k<float, 128>" in place. */
static char *short_name(char *signature)
{
    size_t length = strlen(signature);
    if (length && signature[length - 1] == ')') { /* the parameter list: the bracket matching the last */
        int depth = 0;
        for (size_t i = length; i-- > 0;) {
            if (signature[i] == ')')
                depth++;
            else if (signature[i] == '(' && --depth == 0) {
                signature[i] = 0;
                break;
            }
        }
    }
    char *name = signature;
    int depth = 0; /* a space outside <> and () ends the return type */
    for (char *p = signature; *p; p++) {
        if (*p == '<' || *p == '(')
            depth++;
        else if ((*p == '>' || *p == ')') && depth > 0)
            depth--;
        else if (*p == ' ' && depth == 0)
            name = p + 1;
    }
    return name;
}

void gx_symbol_name(const char *symbol, char *out, size_t size)
{
    char *signature = gx_demangle(symbol);
    snprintf(out, size, "%s", signature ? short_name(signature) : symbol);
    free(signature);
}

static int equal_ignoring_space(const char *a, const char *b)
{
    for (;;) {
        while (*a == ' ' || *a == '\t')
            a++;
        while (*b == ' ' || *b == '\t')
            b++;
        if (*a != *b)
            return 0;
        if (!*a)
            return 1;
        a++, b++;
    }
}

/* Equal, or name ends with "::" + wanted (a name given without its namespaces), spaces ignored. */
static int names_match(const char *name, const char *wanted)
{
    if (equal_ignoring_space(name, wanted))
        return 1;
    int depth = 0;
    for (const char *p = name; *p; p++) {
        if (*p == '<' || *p == '(')
            depth++;
        else if ((*p == '>' || *p == ')') && depth > 0)
            depth--;
        else if (depth == 0 && p[0] == ':' && p[1] == ':' && equal_ignoring_space(p + 2, wanted))
            return 1;
    }
    return 0;
}

int gx_symbol_matches(const char *symbol, const char *wanted)
{
    if (strcmp(symbol, wanted) == 0)
        return 1;
    char *signature = gx_demangle(symbol);
    if (!signature)
        return 0;
    int match = equal_ignoring_space(signature, wanted);
    char *name = short_name(signature);
    if (!match)
        match = names_match(name, wanted);
    size_t length = strlen(name);
    if (!match && length && name[length - 1] == '>') { /* "k<float, 128>" is also "k" */
        int depth = 0;
        for (size_t i = length; i-- > 0;) {
            if (name[i] == '>')
                depth++;
            else if (name[i] == '<' && --depth == 0) {
                name[i] = 0;
                match = names_match(name, wanted);
                break;
            }
        }
    }
    free(signature);
    return match;
}

int gx_symbol_find(const char *const *symbols, int count, const char *wanted, int *first, int *second)
{
    *first = *second = -1;
    for (int i = 0; i < count; i++) /* an exact symbol wins over any demangled match */
        if (strcmp(symbols[i], wanted) == 0)
            return *first = i;
    for (int i = 0; i < count; i++) {
        if (!gx_symbol_matches(symbols[i], wanted))
            continue;
        if (*first < 0)
            *first = i;
        else {
            *second = i;
            return -2;
        }
    }
    return *first;
}
