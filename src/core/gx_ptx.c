#include "gx_ptx.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reads the integer just before `word` on the line [line, end), e.g. "16384 bytes smem". */
static int number_before(const char *line, const char *end, const char *word)
{
    size_t word_length = strlen(word);
    for (const char *p = line; p + word_length <= end; p++) {
        if (memcmp(p, word, word_length) != 0)
            continue;
        const char *q = p;
        while (q > line && q[-1] == ' ')
            q--;
        const char *digits = q;
        while (digits > line && isdigit((unsigned char)digits[-1]))
            digits--;
        if (digits < q)
            return atoi(digits);
    }
    return -1;
}

static void copy_quoted(const char *start, const char *end, char *out, size_t size)
{
    const char *open = memchr(start, '\'', end - start);
    if (!open)
        return;
    const char *close = memchr(open + 1, '\'', end - open - 1);
    if (!close)
        return;
    size_t n = (size_t)(close - open - 1);
    if (n >= size)
        n = size - 1;
    memcpy(out, open + 1, n);
    out[n] = 0;
}

/* The report lists, per function: "Compiling entry function 'f' for 'sm_90'" (entries only),
   "Function properties for f", the stack/spill line, then "Used N registers, ...". */
int gx_ptxas_parse(const char *log, gx_resources *out, int max)
{
    int count = 0;
    gx_resources *current = NULL;
    for (const char *line = log; line && *line;) {
        const char *end = strchr(line, '\n');
        if (!end)
            end = line + strlen(line);
        char name[GX_NAME_BYTES] = "";
        if (strstr(line, "Compiling entry function") && strstr(line, "Compiling entry function") < end) {
            copy_quoted(line, end, name, sizeof name);
        } else if (strstr(line, "Function properties for") && strstr(line, "Function properties for") < end) {
            /* the name after the words, on this line (a damaged report may have no space there) */
            const char *p = strstr(line, "Function properties for") + strlen("Function properties for");
            while (p < end && (*p == ' ' || *p == '\t'))
                p++;
            size_t n = (size_t)(end - p);
            if (n >= sizeof name)
                n = sizeof name - 1;
            memcpy(name, p, n);
            name[n] = 0;
            while (n && isspace((unsigned char)name[n - 1]))
                name[--n] = 0;
        }
        if (name[0]) {
            current = NULL;
            for (int i = 0; i < count; i++)
                if (strcmp(out[i].name, name) == 0)
                    current = &out[i];
            if (!current && count < max) {
                current = &out[count++];
                memset(current, 0, sizeof *current);
                snprintf(current->name, sizeof current->name, "%s", name);
            }
        } else if (current) {
            int v;
            if ((v = number_before(line, end, "bytes stack frame")) >= 0)
                current->stack_frame_bytes = v;
            if ((v = number_before(line, end, "bytes spill stores")) >= 0)
                current->spill_store_bytes = v;
            if ((v = number_before(line, end, "bytes spill loads")) >= 0)
                current->spill_load_bytes = v;
            if ((v = number_before(line, end, "registers")) >= 0)
                current->registers = v;
            if ((v = number_before(line, end, "barriers")) >= 0)
                current->barriers = v;
            if ((v = number_before(line, end, "bytes smem")) >= 0)
                current->static_shared_bytes = v;
            if ((v = number_before(line, end, "bytes cmem[0]")) >= 0)
                current->constant_bytes = v;
        }
        line = *end ? end + 1 : end;
    }
    return count;
}

int gx_ptxas_find(const char *log, const char *name, gx_resources *out)
{
    enum { MAX_FUNCTIONS = 256 };
    gx_resources *all = malloc(MAX_FUNCTIONS * sizeof *all); /* names are long: not on the stack */
    if (!all)
        return -1;
    int count = gx_ptxas_parse(log, all, MAX_FUNCTIONS), found = -1;
    for (int i = 0; i < count && found < 0; i++)
        if (strcmp(all[i].name, name) == 0) {
            *out = all[i];
            found = 0;
        }
    free(all);
    return found;
}

/* Finds ".entry NAME(" with NAME followed by '(' or white space. */
static const char *find_entry(const char *ptx, const char *name)
{
    size_t length = strlen(name);
    for (const char *p = strstr(ptx, ".entry "); p; p = strstr(p + 1, ".entry ")) {
        const char *q = p + 7;
        while (*q == ' ')
            q++;
        if (strncmp(q, name, length) == 0 && (q[length] == '(' || isspace((unsigned char)q[length])))
            return q + length;
    }
    return NULL;
}

int gx_ptx_params(const char *ptx, const char *name, gx_param *out, int max)
{
    const char *p = find_entry(ptx, name);
    if (!p)
        return -1;
    const char *open = strchr(p, '(');
    const char *brace = strchr(p, '{');
    if (!open || (brace && brace < open))
        return 0; /* no parameter list */
    const char *close = strchr(open, ')');
    if (!close)
        return -1;
    int count = 0;
    for (const char *q = strstr(open, ".param"); q && q < close; q = strstr(q + 6, ".param")) {
        if (count == max)
            return -2; /* more than the caller takes: never a list cut short */
        const char *line_end = strpbrk(q, ",)");
        if (!line_end || line_end > close)
            line_end = close;
        gx_param *param = &out[count++];
        memset(param, 0, sizeof *param);
        /* the type is the token after .param (and after .align N / .ptr ... qualifiers) */
        const char *t = q + 6;
        const char *type = NULL;
        while (t < line_end) {
            while (t < line_end && isspace((unsigned char)*t))
                t++;
            if (*t != '.')
                break;
            const char *word = t + 1;
            const char *word_end = word;
            while (word_end < line_end && isalnum((unsigned char)*word_end))
                word_end++;
            if (strncmp(word, "align", 5) == 0) {
                t = word_end;
                while (t < line_end && isspace((unsigned char)*t))
                    t++;
                long align = strtol(t, NULL, 10);
                if (align < 0 || align > 4096)
                    return -1; /* not PTX a compiler wrote */
                param->align_bytes = (int)align;
                while (t < line_end && isdigit((unsigned char)*t))
                    t++;
                continue;
            }
            if (word_end - word <= 4 && strchr("usbf", word[0]) && isdigit((unsigned char)word[1])) {
                type = word;
                snprintf(param->ptx_type, sizeof param->ptx_type, "%.*s", (int)(word_end - word), word);
                t = word_end;
                break;
            }
            t = word_end;
        }
        if (!type)
            continue;
        int bits = atoi(type + 1);
        if (bits != 8 && bits != 16 && bits != 32 && bits != 64)
            return -1; /* .u7, .f0: not PTX a compiler wrote, so its parameters are not known */
        param->type_class = type[0] == 'f' ? GX_PARAM_FLOAT : GX_PARAM_INTEGER;
        param->size_bytes = bits / 8;
        const char *bracket = memchr(t, '[', (size_t)(line_end - t));
        if (bracket) { /* .b8 name[16] */
            long elements = strtol(bracket + 1, NULL, 10);
            if (elements < 1 || elements > (1L << 20))
                return -1; /* [-4], [2111111111111...]: no parameter is that */
            param->type_class = GX_PARAM_BYTES;
            param->size_bytes = (int)elements * (bits / 8);
            snprintf(param->ptx_type + strlen(param->ptx_type), sizeof param->ptx_type - strlen(param->ptx_type),
                     "[%ld]", elements);
        }
    }
    return count;
}

void gx_ptx_entries(const char *ptx, char *buffer, size_t size)
{
    buffer[0] = 0;
    size_t used = 0;
    for (const char *p = strstr(ptx, ".entry "); p && used + 1 < size; p = strstr(p + 1, ".entry ")) {
        const char *q = p + 7;
        while (*q == ' ')
            q++;
        size_t n = strcspn(q, "( \t\n");
        used += (size_t)snprintf(buffer + used, size - used, "%s%.*s", used ? ", " : "", (int)n, q);
    }
}

int gx_ptx_required_cluster(const char *ptx, const char *name, int cluster[3])
{
    cluster[0] = cluster[1] = cluster[2] = 0;
    const char *p = find_entry(ptx, name);
    const char *body = p ? strchr(p, '{') : NULL;
    if (!body)
        return 0;
    /* the performance directives sit between the parameter list and the body */
    const char *directive = strstr(p, ".reqnctapercluster");
    if (!directive || directive > body)
        return 0;
    int x = 1, y = 1, z = 1;
    if (sscanf(directive + 18, " %d , %d , %d", &x, &y, &z) < 1 || x < 1 || y < 1 || z < 1)
        return 0;
    cluster[0] = x, cluster[1] = y, cluster[2] = z;
    return 1;
}

/* ".visible .const .align 4 .b8 coefficients[64];", ".global .align 4 .u32 counter = 5;": the
   state space, then qualifiers and the type, then the name with an optional [count]. */
int gx_ptx_globals(const char *ptx, gx_ptx_global *out, int max)
{
    int count = 0;
    for (const char *line = ptx; line && *line && count < max;
         line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
        const char *t = line;
        while (*t == ' ' || *t == '\t')
            t++;
        if (strncmp(t, ".visible ", 9) == 0 || strncmp(t, ".extern ", 8) == 0 || strncmp(t, ".weak ", 6) == 0)
            t = strchr(t, ' ') + 1;
        int constant = strncmp(t, ".const ", 7) == 0;
        if (!constant && strncmp(t, ".global ", 8) != 0)
            continue;
        const char *end = strpbrk(t, ";\n");
        if (!end || *end != ';')
            continue;
        /* the last word before ';' or '=' or '[' is the name; the word before it the type */
        const char *stop = t;
        while (stop < end && *stop != '=' && *stop != '[')
            stop++;
        const char *name_end = stop;
        while (name_end > t && isspace((unsigned char)name_end[-1]))
            name_end--;
        const char *name = name_end;
        while (name > t && !isspace((unsigned char)name[-1]))
            name--;
        const char *type_end = name;
        while (type_end > t && isspace((unsigned char)type_end[-1]))
            type_end--;
        const char *type = type_end;
        while (type > t && !isspace((unsigned char)type[-1]))
            type--;
        if (name_end <= name || *type != '.' || (size_t)(name_end - name) >= sizeof out[0].name)
            continue;
        int size = 0;
        static const struct {
            const char *type;
            int bytes;
        } sizes[] = {{".b8", 1},  {".u8", 1},  {".s8", 1},  {".b16", 2}, {".u16", 2},
                     {".s16", 2}, {".f16", 2}, {".b32", 4}, {".u32", 4}, {".s32", 4},
                     {".f32", 4}, {".b64", 8}, {".u64", 8}, {".s64", 8}, {".f64", 8}};
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
            if ((size_t)(type_end - type) == strlen(sizes[i].type) &&
                strncmp(type, sizes[i].type, (size_t)(type_end - type)) == 0)
                size = sizes[i].bytes;
        if (!size)
            continue;
        long elements = 1;
        if (*stop == '[')
            elements = strtol(stop + 1, NULL, 10);
        if (elements < 1)
            continue;
        gx_ptx_global *g = &out[count++];
        memset(g, 0, sizeof *g);
        memcpy(g->name, name, (size_t)(name_end - name));
        snprintf(g->ptx_type, sizeof g->ptx_type, "%.*s", (int)(type_end - type - 1), type + 1);
        g->bytes = (size_t)elements * (size_t)size;
        g->constant = constant;
    }
    return count;
}
