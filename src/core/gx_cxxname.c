#include "gx_cxxname.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_TOKENS = 1024, TOKEN_BYTES = 128 };

typedef struct token_list {
    int count;
    char text[MAX_TOKENS][TOKEN_BYTES];
} token_list;

static int is_word_start(int c)
{
    return isalpha(c) || c == '_';
}
static int is_word(const char *t)
{
    return is_word_start((unsigned char)t[0]) || isdigit((unsigned char)t[0]);
}

static int push_token(token_list *list, const char *text, size_t length)
{
    if (list->count == MAX_TOKENS || length >= TOKEN_BYTES)
        return -1;
    memcpy(list->text[list->count], text, length);
    list->text[list->count++][length] = 0;
    return 0;
}

/* An integer literal in decimal without its suffix; other numbers (1.5f) as written. */
static void number_token(const char *text, size_t length, char *out)
{
    char literal[TOKEN_BYTES];
    snprintf(literal, sizeof literal, "%.*s", (int)length, text);
    size_t digits = length;
    while (digits > 0 && strchr("uUlLzZ", literal[digits - 1]))
        digits--;
    literal[digits] = 0;
    for (char *p = literal; *p; p++) /* digit separators: 1'024 */
        if (*p == '\'')
            memmove(p, p + 1, strlen(p));
    char *end;
    unsigned long long value = strtoull(literal, &end, 0);
    if (*end == 0 && end != literal)
        snprintf(out, TOKEN_BYTES, "%llu", value);
    else
        snprintf(out, TOKEN_BYTES, "%.*s", (int)length, text);
}

static int tokenize(const char *name, token_list *list)
{
    list->count = 0;
    for (const char *p = name; *p;) {
        if (isspace((unsigned char)*p)) {
            p++;
        } else if (is_word_start((unsigned char)*p)) {
            const char *start = p;
            while (isalnum((unsigned char)*p) || *p == '_')
                p++;
            if (push_token(list, start, (size_t)(p - start)))
                return -1;
        } else if (isdigit((unsigned char)*p)) {
            const char *start = p;
            while (isalnum((unsigned char)*p) || *p == '.' || *p == '\'')
                p++;
            char number[TOKEN_BYTES];
            number_token(start, (size_t)(p - start), number);
            if (push_token(list, number, strlen(number)))
                return -1;
        } else if (p[0] == ':' && p[1] == ':') {
            if (push_token(list, p, 2))
                return -1;
            p += 2;
        } else {
            if (push_token(list, p, 1))
                return -1;
            p++;
        }
    }
    return 0;
}

static void remove_token(token_list *list, int i)
{
    memmove(list->text[i], list->text[i + 1], (size_t)(list->count - i - 1) * TOKEN_BYTES);
    list->count--;
}

static int insert_token(token_list *list, int i, const char *text)
{
    if (list->count == MAX_TOKENS)
        return -1;
    memmove(list->text[i + 1], list->text[i], (size_t)(list->count - i) * TOKEN_BYTES);
    snprintf(list->text[i], TOKEN_BYTES, "%s", text);
    list->count++;
    return 0;
}

static int is_builtin(const char *t)
{
    static const char *const builtins[] = {"unsigned", "signed",   "short",    "long", "int",     "char",
                                           "float",    "double",   "bool",     "void", "wchar_t", "char8_t",
                                           "char16_t", "char32_t", "__int128", NULL};
    for (int i = 0; builtins[i]; i++)
        if (strcmp(t, builtins[i]) == 0)
            return 1;
    return 0;
}

/* CUB_300001_SM_900, CUB_300001_SM_800_900, THRUST_300001_SM_900_NS, __4, __cxx11 */
static int is_abi_namespace(const char *t)
{
    if (strcmp(t, "__cxx11") == 0)
        return 1;
    if (t[0] == '_' && t[1] == '_' && t[2]) {
        for (const char *p = t + 2; *p; p++)
            if (!isdigit((unsigned char)*p))
                return 0;
        return 1;
    }
    const char *rest = strncmp(t, "CUB_", 4) == 0 ? t + 4 : strncmp(t, "THRUST_", 7) == 0 ? t + 7 : NULL;
    if (!rest || !isdigit((unsigned char)*rest))
        return 0;
    while (isdigit((unsigned char)*rest))
        rest++;
    return strncmp(rest, "_SM_", 4) == 0;
}

/* The index past the type name that starts at i: builtin words, or a qualified name with its
   template arguments; i when none starts there. */
static int type_name_end(const token_list *list, int i)
{
    if (i < list->count && is_builtin(list->text[i])) {
        while (i < list->count && is_builtin(list->text[i]))
            i++;
        return i;
    }
    int j = i;
    if (j < list->count && strcmp(list->text[j], "::") == 0)
        j++;
    if (j >= list->count || !is_word_start((unsigned char)list->text[j][0]))
        return i;
    for (;;) {
        j++; /* past the identifier */
        if (j < list->count && strcmp(list->text[j], "<") == 0) {
            int depth = 0;
            for (; j < list->count; j++) {
                if (strcmp(list->text[j], "<") == 0 || strcmp(list->text[j], "(") == 0)
                    depth++;
                else if ((strcmp(list->text[j], ">") == 0 || strcmp(list->text[j], ")") == 0) && --depth == 0) {
                    j++;
                    break;
                }
            }
        }
        if (j + 1 < list->count && strcmp(list->text[j], "::") == 0 &&
            is_word_start((unsigned char)list->text[j + 1][0]))
            j++;
        else
            return j;
    }
}

static int canonicalize(token_list *list)
{
    for (int i = 0; i < list->count; i++) {
        char *t = list->text[i];
        if (strcmp(t, "true") == 0)
            snprintf(t, TOKEN_BYTES, "1");
        else if (strcmp(t, "false") == 0)
            snprintf(t, TOKEN_BYTES, "0");
    }
    for (int i = 0; i < list->count; i++) {
        const char *t = list->text[i];
        int next_is_word = i + 1 < list->count && is_word_start((unsigned char)list->text[i + 1][0]);
        if (i + 1 < list->count && strcmp(list->text[i + 1], "::") == 0 && is_abi_namespace(t)) {
            remove_token(list, i); /* the namespace and its "::" */
            remove_token(list, i);
            i--;
        } else if ((strcmp(t, "struct") == 0 || strcmp(t, "class") == 0 || strcmp(t, "union") == 0 ||
                    strcmp(t, "enum") == 0) &&
                   next_is_word) {
            remove_token(list, i--);
        } else if (strcmp(t, "(") == 0 && i + 2 < list->count && strcmp(list->text[i + 1], "void") == 0 &&
                   strcmp(list->text[i + 2], ")") == 0) {
            remove_token(list, i + 1); /* (void) -> () */
        }
    }
    /* builtin spellings: the demangler's "unsigned int", "long", "long long", "short" */
    for (int i = 0; i < list->count; i++) {
        if (!is_builtin(list->text[i]))
            continue;
        int end = i;
        while (end < list->count && is_builtin(list->text[end]))
            end++;
        int has_int = 0, has_size = 0, has_char = 0, is_signed = 0, is_unsigned = 0;
        for (int k = i; k < end; k++) {
            const char *w = list->text[k];
            has_int |= strcmp(w, "int") == 0;
            has_size |= strcmp(w, "short") == 0 || strcmp(w, "long") == 0;
            has_char |= strcmp(w, "char") == 0;
            is_signed |= strcmp(w, "signed") == 0;
            is_unsigned |= strcmp(w, "unsigned") == 0;
        }
        for (int k = i; k < end; k++) /* "long int" -> "long"; "signed int" -> "int" */
            if ((strcmp(list->text[k], "int") == 0 && has_size) ||
                (strcmp(list->text[k], "signed") == 0 && !has_char)) {
                remove_token(list, k--);
                end--;
            }
        if (end == i) { /* "signed" alone was int */
            if (insert_token(list, i, "int"))
                return -1;
            end++;
        } else if (is_unsigned && !has_int && !has_size && !has_char) {
            if (insert_token(list, end, "int"))
                return -1;
            end++;
        }
        (void)is_signed;
        i = end - 1;
    }
    /* const and volatile after what they qualify */
    for (int i = 0; i < list->count; i++) {
        if (strcmp(list->text[i], "const") != 0 && strcmp(list->text[i], "volatile") != 0)
            continue;
        int end = type_name_end(list, i + 1);
        if (end == i + 1)
            continue;
        char qualifier[TOKEN_BYTES];
        snprintf(qualifier, sizeof qualifier, "%s", list->text[i]);
        remove_token(list, i);
        if (insert_token(list, end - 1, qualifier))
            return -1;
        i = end - 1;
    }
    return 0;
}

int gx_cxx_normalize(const char *name, char *out, size_t size)
{
    static __thread token_list list;
    if (size == 0)
        return -1;
    out[0] = 0;
    if (tokenize(name, &list) || canonicalize(&list)) {
        snprintf(out, size, "%s", name);
        return -1;
    }
    size_t used = 0;
    for (int i = 0; i < list.count; i++) {
        const char *t = list.text[i];
        int space = i > 0 && is_word(list.text[i - 1]) && is_word(t);
        int n = snprintf(out + used, size - used, "%s%s", space ? " " : "", t);
        if (n < 0 || (size_t)n >= size - used)
            return -1;
        used += (size_t)n;
    }
    return 0;
}

int gx_edit_distance(const char *a, const char *b)
{
    enum { LIMIT = 1023 };
    size_t n = strlen(a), m = strlen(b);
    if (n > LIMIT)
        n = LIMIT;
    if (m > LIMIT)
        m = LIMIT;
    int rows[3][LIMIT + 1]; /* the rows of i - 2, i - 1 and i */
    int *before = rows[0], *previous = rows[1], *row = rows[2];
    for (size_t j = 0; j <= m; j++)
        previous[j] = (int)j;
    for (size_t i = 1; i <= n; i++) {
        row[0] = (int)i;
        for (size_t j = 1; j <= m; j++) {
            int best = previous[j - 1] + (a[i - 1] != b[j - 1]);
            if (previous[j] + 1 < best)
                best = previous[j] + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && before[j - 2] + 1 < best)
                best = before[j - 2] + 1; /* two neighbours swapped */
            row[j] = best;
        }
        int *oldest = before;
        before = previous;
        previous = row;
        row = oldest;
    }
    return previous[m];
}

static char *trimmed_copy(const char *start, const char *end)
{
    while (start < end && isspace((unsigned char)*start))
        start++;
    while (end > start && isspace((unsigned char)end[-1]))
        end--;
    char *copy = malloc((size_t)(end - start) + 1);
    if (copy) {
        memcpy(copy, start, (size_t)(end - start));
        copy[end - start] = 0;
    }
    return copy;
}

int gx_cxx_list(const char *text, char **items, int max, const char **end)
{
    if (text[0] != '<' && text[0] != '(')
        return -1;
    int depth = 0, count = 0;
    const char *item = text + 1;
    for (const char *p = text; *p; p++) {
        if (*p == '<' || *p == '(' || *p == '[')
            depth++;
        else if (*p == '>' || *p == ')' || *p == ']') {
            if (--depth == 0) {
                if ((p > item || count > 0) && count < max && (items[count] = trimmed_copy(item, p)) != NULL)
                    count++;
                if (count == 1 && items[0][0] == 0) /* "()" */
                    free(items[--count]);
                if (end)
                    *end = p + 1;
                return count;
            }
        } else if (*p == ',' && depth == 1) {
            if (count < max && (items[count] = trimmed_copy(item, p)) != NULL)
                count++;
            item = p + 1;
        }
    }
    for (int i = 0; i < count; i++)
        free(items[i]);
    return -1;
}

/* The canonical name's last component: its start (after the last top-level "::") and its
   template list (at '<', or NULL). */
static const char *last_component(const char *name, const char **template_list)
{
    const char *start = name;
    int depth = 0;
    *template_list = NULL;
    for (const char *p = name; *p; p++) {
        if (*p == '<' || *p == '(') {
            if (depth == 0 && *p == '<')
                *template_list = p;
            depth++;
        } else if ((*p == '>' || *p == ')') && depth > 0) {
            depth--;
        } else if (depth == 0 && p[0] == ':' && p[1] == ':') {
            start = p + 2;
            *template_list = NULL;
        }
    }
    return start;
}

int gx_cxx_differs_by_enumerators(const char *a, const char *b)
{
    const char *list_a, *list_b;
    const char *base_a = last_component(a, &list_a), *base_b = last_component(b, &list_b);
    if (!list_a || !list_b || list_a - base_a != list_b - base_b || strncmp(base_a, base_b, (size_t)(list_a - base_a)))
        return 0;
    enum { MAX_ARGS = 32 };
    char *args_a[MAX_ARGS], *args_b[MAX_ARGS];
    int count_a = gx_cxx_list(list_a, args_a, MAX_ARGS, NULL), count_b = gx_cxx_list(list_b, args_b, MAX_ARGS, NULL);
    int result = count_a == count_b && count_a > 0, enumerators = 0;
    for (int i = 0; result && i < count_a; i++) {
        if (strcmp(args_a[i], args_b[i]) == 0)
            continue;
        /* b: "(E)N"; a: a (qualified) name */
        const char *close = strchr(args_b[i], ')');
        int cast = args_b[i][0] == '(' && close && close[1] && strspn(close + 1, "-0123456789") == strlen(close + 1);
        int named = is_word_start((unsigned char)args_a[i][0]) || (args_a[i][0] == ':' && args_a[i][1] == ':');
        for (const char *p = args_a[i]; named && *p; p++)
            named = isalnum((unsigned char)*p) || *p == '_' || *p == ':';
        if (cast && named)
            enumerators++;
        else
            result = 0;
    }
    for (int i = 0; i < count_a; i++)
        free(args_a[i]);
    for (int i = 0; i < count_b; i++)
        free(args_b[i]);
    return result && enumerators > 0;
}
