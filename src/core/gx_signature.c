/* A kernel's C parameter types from its source text (see gx_signature.h). */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "gx_signature.h"

static int is_identifier_char(char c)
{
    return isalnum((unsigned char)c) || c == '_';
}

/* One parameter's text (start .. end) without its name, default value and qualifiers the type does
   not need (__restrict__), spaces normalized: "const float * __restrict__ x" -> "const float*". */
static void parameter_type(const char *start, const char *end, char *out, size_t size)
{
    char text[256];
    size_t n = (size_t)(end - start) < sizeof text - 1 ? (size_t)(end - start) : sizeof text - 1;
    memcpy(text, start, n);
    text[n] = 0;
    char *equals = strchr(text, '=');
    if (equals)
        *equals = 0;
    /* words and symbols, dropping restrict qualifiers */
    char words[16][64];
    int count = 0;
    for (char *p = text; *p && count < 16;) {
        if (isspace((unsigned char)*p)) {
            p++;
        } else if (is_identifier_char(*p)) {
            int k = 0;
            while (is_identifier_char(*p) && k < 63)
                words[count][k++] = *p++;
            words[count][k] = 0;
            if (strcmp(words[count], "__restrict__") && strcmp(words[count], "__restrict") &&
                strcmp(words[count], "restrict"))
                count++;
        } else {
            words[count][0] = *p++;
            words[count][1] = 0;
            count++;
        }
    }
    /* the last identifier is the parameter's name when something comes before it that is a type */
    if (count >= 2 && is_identifier_char(words[count - 1][0]) && strcmp(words[count - 1], "int") &&
        strcmp(words[count - 1], "char") && strcmp(words[count - 1], "long") && strcmp(words[count - 1], "short") &&
        strcmp(words[count - 1], "unsigned") && strcmp(words[count - 1], "signed"))
        count--;
    out[0] = 0;
    size_t used = 0;
    for (int i = 0; i < count && used < size; i++) {
        int symbol = !is_identifier_char(words[i][0]);
        int space = i > 0 && !symbol && is_identifier_char(words[i - 1][0]);
        int space_after_symbol = i > 0 && !symbol && !is_identifier_char(words[i - 1][0]) && words[i - 1][0] != ':' &&
                                 words[i - 1][0] != '<';
        used += (size_t)snprintf(out + used, size - used, "%s%s", space || space_after_symbol ? " " : "", words[i]);
    }
}

/* Parses the parameter list that starts after '(' at p; returns the count, or -1 when unbalanced. */
static int parameter_list(const char *p, char *types, size_t size, int max)
{
    int depth = 0, count = 0;
    const char *start = p;
    for (; *p; p++) {
        if (*p == '(' || *p == '<' || *p == '[' || *p == '{') {
            depth++;
        } else if ((*p == ')' || *p == '>' || *p == ']' || *p == '}') && depth > 0) {
            depth--;
        } else if ((*p == ',' && depth == 0) || (*p == ')' && depth == 0)) {
            const char *s = start;
            while (s < p && isspace((unsigned char)*s))
                s++;
            if (p > s && count < max) {
                parameter_type(s, p, types + (size_t)count * size, size);
                if (strcmp(types + (size_t)count * size, "void") != 0)
                    count++;
            }
            if (*p == ')')
                return count;
            start = p + 1;
        }
    }
    return -1;
}

int gx_signature_types(const char *source, const char *name, char *types, size_t size, int max)
{
    size_t name_length = strlen(name);
    int found = -1;
    for (const char *p = strstr(source, "__global__"); p; p = strstr(p + 10, "__global__")) {
        /* the declarator: the first NAME( after __global__, before a ';' or '{' */
        const char *q = p + 10;
        while (*q && *q != ';' && *q != '{') {
            if (strncmp(q, name, name_length) == 0 && (q == source || !is_identifier_char(q[-1]))) {
                const char *after = q + name_length;
                while (isspace((unsigned char)*after))
                    after++;
                if (*after == '(') {
                    int count = parameter_list(after + 1, types, size, max);
                    if (count >= 0 && found >= 0 && count != found)
                        return -1; /* overloads with other counts: no one answer */
                    if (count >= 0)
                        found = count;
                    break;
                }
            }
            q++;
        }
    }
    return found;
}
