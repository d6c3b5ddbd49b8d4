#include "gx_symbols.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gx_cxxname.h"

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

/* Cuts the group text ends with ("(float*, int)", "<float,128>": from the bracket that matches
   its last one) in place; 0 when text does not end with close. */
static int cut_trailing_group(char *text, char open, char close)
{
    size_t length = strlen(text);
    if (!length || text[length - 1] != close)
        return 0;
    int depth = 0;
    for (size_t i = length; i-- > 0;) {
        if (text[i] == close)
            depth++;
        else if (text[i] == open && --depth == 0) {
            text[i] = 0;
            return 1;
        }
    }
    return 0;
}

/* Cuts "void ns::k<float, 128>(float*, int)" to "ns::k<float, 128>" in place. */
static char *short_name(char *signature)
{
    cut_trailing_group(signature, '(', ')'); /* the parameter list */
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

/* The text after the next "::" from p on at the top level of a C++ name (outside template
   arguments and parameter lists: "ns::k<a::b>" has one), or NULL when there is none. */
static const char *next_scope(const char *p)
{
    int depth = 0;
    for (; *p; p++) {
        if (*p == '<' || *p == '(')
            depth++;
        else if ((*p == '>' || *p == ')') && depth > 0)
            depth--;
        else if (depth == 0 && p[0] == ':' && p[1] == ':')
            return p + 2;
    }
    return NULL;
}

/* Equal, or name ends with "::" + wanted at the top level (a name given without its namespaces);
   both canonical (gx_cxx_normalize). */
static int names_match(const char *name, const char *wanted)
{
    if (strcmp(name, wanted) == 0)
        return 1;
    for (const char *tail = next_scope(name); tail; tail = next_scope(tail))
        if (strcmp(tail, wanted) == 0)
            return 1;
    return 0;
}

enum { NAME_BYTES = 4096 };

int gx_symbol_matches(const char *symbol, const char *wanted)
{
    if (strcmp(symbol, wanted) == 0)
        return 1;
    char *signature = gx_demangle(symbol);
    if (!signature)
        return 0;
    char *want = malloc(NAME_BYTES), *form = malloc(NAME_BYTES);
    int match = 0;
    if (want && form) {
        gx_cxx_normalize(wanted, want, NAME_BYTES);
        gx_cxx_normalize(signature, form, NAME_BYTES); /* "void ns::k<float,128>(float*,int)" */
        match = strcmp(form, want) == 0 || (strncmp(form, "void ", 5) == 0 && names_match(form + 5, want));
        if (!match) { /* "ns::k<float,128>", then "ns::k" */
            gx_cxx_normalize(short_name(signature), form, NAME_BYTES);
            match = names_match(form, want) || (cut_trailing_group(form, '<', '>') && names_match(form, want));
        }
    }
    free(want);
    free(form);
    free(signature);
    return match;
}

/* The symbol's name (gx_symbol_name) in canonical form. */
static void canonical_name(const char *symbol, char *out, size_t size)
{
    char name[NAME_BYTES];
    gx_symbol_name(symbol, name, sizeof name);
    gx_cxx_normalize(name, out, size);
}

int gx_symbol_nearest(const char *const *symbols, int count, const char *wanted, int *nearest, int max)
{
    char want[NAME_BYTES], name[NAME_BYTES];
    gx_cxx_normalize(wanted, want, sizeof want);
    int *distances = malloc(sizeof(int) * (size_t)(count ? count : 1));
    if (!distances)
        return 0;
    for (int i = 0; i < count; i++) {
        canonical_name(symbols[i], name, sizeof name);
        distances[i] = gx_edit_distance(want, name);
        /* a name given without its namespaces is measured against the name without them too */
        const char *last = name;
        for (const char *tail = next_scope(name); tail; tail = next_scope(tail))
            last = tail;
        if (last != name) {
            int d = gx_edit_distance(want, last);
            if (d < distances[i])
                distances[i] = d;
        }
    }
    int found = 0;
    for (; found < max && found < count; found++) { /* the max smallest, ties in the symbols' order */
        int best = -1;
        for (int i = 0; i < count; i++)
            if (distances[i] >= 0 && (best < 0 || distances[i] < distances[best]))
                best = i;
        nearest[found] = best;
        distances[best] = -1;
    }
    free(distances);
    return found;
}

int gx_symbol_enumerator_match(const char *const *symbols, int count, const char *wanted)
{
    char want[NAME_BYTES], name[NAME_BYTES];
    gx_cxx_normalize(wanted, want, sizeof want);
    for (int i = 0; i < count; i++) {
        canonical_name(symbols[i], name, sizeof name);
        if (gx_cxx_differs_by_enumerators(want, name))
            return i;
    }
    return -1;
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
