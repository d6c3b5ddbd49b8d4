#include "gx_options.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum {
    OPTION_PASS,    /* NVRTC takes it: emitted as `nvrtc` (with =value when it has one) */
    OPTION_DROP,    /* host code or output files only: dropped, with the note */
    OPTION_REFUSE,  /* changes what is built in a way NVRTC cannot: an error, with the note */
    OPTION_PTXAS,   /* -Xptxas a,b: one --ptxas-options= per item */
    OPTION_DEFINE,  /* -D / -U */
    OPTION_INCLUDE, /* -I / -isystem: resolved by the caller */
    OPTION_ARCH,    /* -arch */
    OPTION_CODE,    /* -code */
    OPTION_GENCODE, /* -gencode arch=...,code=... */
    OPTION_CUDAFE,  /* -Xcudafe: the diagnostics options map, the rest are dropped */
    OPTION_RDC,     /* -rdc=true refused, false dropped */
} option_kind;

typedef struct option_rule {
    const char *names; /* the spellings without leading dashes, '|' separated */
    option_kind kind;
    int takes_value;   /* 1: a value, as =V or as the next argument */
    const char *nvrtc; /* OPTION_PASS: NVRTC's spelling */
    const char *note;  /* why it was dropped, mapped or refused */
    int nvcc_keeps;    /* kept when nvcc compiles (gpuexp sets the outputs and architecture itself) */
} option_rule;

static const option_rule rules[] = {
    {"lineinfo|generate-line-info", OPTION_PASS, 0, "--generate-line-info", NULL, 1},
    {"G|device-debug", OPTION_PASS, 0, "--device-debug", NULL, 1},
    {"use_fast_math|use-fast-math", OPTION_PASS, 0, "--use_fast_math", NULL, 1},
    {"ftz", OPTION_PASS, 1, "--ftz", NULL, 1},
    {"prec-div", OPTION_PASS, 1, "--prec-div", NULL, 1},
    {"prec-sqrt", OPTION_PASS, 1, "--prec-sqrt", NULL, 1},
    {"fmad", OPTION_PASS, 1, "--fmad", NULL, 1},
    {"maxrregcount", OPTION_PASS, 1, "--maxrregcount", NULL, 1},
    {"std", OPTION_PASS, 1, "--std", NULL, 1},
    {"w|disable-warnings", OPTION_PASS, 0, "--disable-warnings", NULL, 1},
    {"restrict", OPTION_PASS, 0, "--restrict", NULL, 1},
    {"extra-device-vectorization", OPTION_PASS, 0, "--extra-device-vectorization", NULL, 1},
    {"dopt", OPTION_PASS, 1, "--dopt", NULL, 1},
    {"Ofast-compile", OPTION_PASS, 1, "--Ofast-compile", NULL, 1},
    {"diag-suppress|diag_suppress", OPTION_PASS, 1, "--diag-suppress", NULL, 1},
    {"diag-error|diag_error", OPTION_PASS, 1, "--diag-error", NULL, 1},
    {"diag-warn|diag_warn", OPTION_PASS, 1, "--diag-warn", NULL, 1},
    {"default-device", OPTION_PASS, 0, "-default-device", NULL, 0},
    {"device-int128", OPTION_PASS, 0, "--device-int128", NULL, 1},
    {"include|pre-include", OPTION_PASS, 1, "--pre-include", NULL, 1},
    {"Xnvvm", OPTION_PASS, 1, "-Xnvvm", NULL, 1},
    {"split-compile", OPTION_PASS, 1, "--split-compile", NULL, 1},
    {"expt-relaxed-constexpr", OPTION_PASS, 0, "-default-device",
     "mapped to -default-device (NVRTC has no host functions, so unannotated constexpr functions are compiled for the "
     "device)",
     1},
    {"expt-extended-lambda|extended-lambda", OPTION_DROP, 0, NULL,
     "dropped: extended lambdas are written in host code, which NVRTC does not compile", 1},
    {"O|O0|O1|O2|O3|optimize", OPTION_DROP, 0, NULL,
     "dropped: it sets host code optimisation (device code is optimised by default, as ptxas -O3)", 1},
    {"g|debug", OPTION_DROP, 0, NULL, "dropped: host debug information (-G is device debug)", 1},
    {"Xcompiler|compiler-options", OPTION_DROP, 1, NULL, "dropped: options for the host compiler", 1},
    {"ccbin|compiler-bindir", OPTION_DROP, 1, NULL, "dropped: the host compiler", 1},
    {"allow-unsupported-compiler|forward-unknown-to-host-compiler|forward-unknown-to-host-linker", OPTION_DROP, 0, NULL,
     "dropped: host compiler settings", 1},
    {"t|threads|time", OPTION_DROP, 1, NULL, "dropped: nvcc's build settings", 1},
    {"default-stream|cudart|cudadevrt", OPTION_DROP, 1, NULL, "dropped: host runtime settings", 1},
    {"Xlinker|linker-options|Xnvlink|Xarchive|L|l|library|library-path", OPTION_DROP, 1, NULL,
     "dropped: link options (NVRTC links nothing)", 0},
    {"shared|lib|link|run", OPTION_DROP, 0, NULL, "dropped: what nvcc outputs", 0},
    {"c|compile|cubin|fatbin|ptx|E|preprocess|keep|save-temps|resource-usage|res-usage|v|verbose|m64", OPTION_DROP, 0,
     NULL, "dropped: what nvcc outputs or prints (gpuexp makes the cubin and keeps ptxas' report itself)", 0},
    {"o|output-file|odir|output-directory|keep-dir|x|language|MF|MT|dependency-output", OPTION_DROP, 1, NULL,
     "dropped: nvcc's files", 0},
    {"M|MM|MD|MMD|generate-dependencies|generate-nonsystem-dependencies", OPTION_DROP, 0, NULL,
     "dropped: dependency files", 0},
    {"Xptxas|ptxas-options", OPTION_PTXAS, 1, NULL, NULL, 1},
    {"D|define-macro|U|undefine-macro", OPTION_DEFINE, 1, NULL, NULL, 1},
    {"I|include-path|isystem|system-include", OPTION_INCLUDE, 1, NULL, NULL, 0},
    {"arch|gpu-architecture", OPTION_ARCH, 1, NULL, NULL, 0},
    {"code|gpu-code", OPTION_CODE, 1, NULL, NULL, 0},
    {"gencode|generate-code", OPTION_GENCODE, 1, NULL, NULL, 0},
    {"Xcudafe", OPTION_CUDAFE, 1, NULL, NULL, 1},
    {"rdc|relocatable-device-code", OPTION_RDC, 1, NULL, NULL, 1},
    {"dc|device-c|dw|device-w|dlink|device-link", OPTION_REFUSE, 0, NULL,
     "separate compilation needs a device link step, which NVRTC does not do: build with nvcc and load the linked "
     "cubin with gpuexp.load{file = ...}",
     0},
    {"dlto|dlink-time-opt|lto", OPTION_REFUSE, 0, NULL,
     "link-time optimisation makes LTO IR, not a cubin: build with nvcc and load the result with gpuexp.load{file = "
     "...}",
     0},
};

/* Does `name` (up to `length` characters) match one of the '|' separated spellings? */
static int matches(const char *spellings, const char *name, size_t length)
{
    for (const char *p = spellings; *p;) {
        const char *end = strchr(p, '|');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n == length && strncmp(p, name, n) == 0)
            return 1;
        if (!end)
            break;
        p = end + 1;
    }
    return 0;
}

/* Short options glued to their value: -DX=1, -Ifolder, -lcublas, -Lpath, -O3, -UX, -t4. */
static const option_rule *glued_rule(const char *name, const char **value)
{
    static const char glued[] = "DUILlt";
    if (name[0] && strchr(glued, name[0]) && name[1] && name[1] != '=') {
        for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++)
            if (rules[i].takes_value && matches(rules[i].names, name, 1)) {
                *value = name + 1;
                return &rules[i];
            }
    }
    return NULL;
}

static int add(char **list, int *count, const char *text)
{
    if (*count >= GX_OPTIONS_MAX)
        return -1;
    list[*count] = strdup(text);
    return list[*count] ? (*count)++, 0 : -1;
}

static int add_pair(char **list, int *count, const char *name, const char *value)
{
    char *text;
    if (asprintf(&text, value ? "%s=%s" : "%s", name, value) < 0)
        return -1;
    int status = *count < GX_OPTIONS_MAX ? 0 : -1;
    if (status == 0)
        list[(*count)++] = text;
    else
        free(text);
    return status;
}

static void note(gx_options *out, const char *option, const char *text)
{
    size_t used = strlen(out->notes);
    if (strstr(out->notes, option) && strstr(out->notes, text))
        return;
    snprintf(out->notes + used, sizeof out->notes - used, "%s%s: %s", used ? "; " : "", option, text);
}

static void add_target(gx_options *out, const char *target, size_t length)
{
    while (length && (*target == ' ' || *target == '"' || *target == '[' || *target == '\''))
        target++, length--;
    while (length && (target[length - 1] == ' ' || target[length - 1] == '"' || target[length - 1] == ']' ||
                      target[length - 1] == '\''))
        length--;
    if (!length || length >= sizeof out->targets[0] || out->target_count >= GX_OPTIONS_TARGETS)
        return;
    char text[16];
    snprintf(text, sizeof text, "%.*s", (int)length, target);
    if (strcmp(text, "all-major") == 0)
        snprintf(text, sizeof text, "all");
    if (strncmp(text, "lto_", 4) == 0) /* LTO IR is linked, not run: it never picks what runs */
        return;
    for (int i = 0; i < out->target_count; i++)
        if (strcmp(out->targets[i], text) == 0)
            return;
    snprintf(out->targets[out->target_count++], sizeof out->targets[0], "%s", text);
}

/* A comma separated list of builds, as in -code=sm_80,compute_80 or code=[sm_80,compute_80]. */
static void add_targets(gx_options *out, const char *list)
{
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ",");
        add_target(out, p, n);
        p += n;
        if (*p == ',')
            p++;
    }
}

/* -arch=sm_XY means builds sm_XY and compute_XY; compute_XY only the PTX. */
static void add_arch(gx_options *out, const char *value)
{
    if (strncmp(value, "sm_", 3) == 0) {
        add_target(out, value, strlen(value));
        char virtual_arch[24];
        snprintf(virtual_arch, sizeof virtual_arch, "compute_%s", value + 3);
        add_target(out, virtual_arch, strlen(virtual_arch));
    } else {
        add_target(out, value, strlen(value));
    }
}

static int too_many(gx_error *error)
{
    return gx_fail(error, GX_ERR_USAGE, "compile: more than %d options", GX_OPTIONS_MAX);
}

/* The rule of an option's name (its first *length characters), else of a short option glued to
   its value (then *value is that value and *length 1); NULL when no rule knows it. */
static const option_rule *find_rule(const char *name, size_t *length, const char **value)
{
    for (size_t r = 0; r < sizeof rules / sizeof rules[0]; r++)
        if (matches(rules[r].names, name, *length))
            return &rules[r];
    const option_rule *rule = glued_rule(name, value);
    if (rule)
        *length = 1;
    return rule;
}

/* An option no rule knows: nvcc takes it; NVRTC too (it may know it), but for the host
   compiler's warning settings (-Wno-deprecated-gpu-targets, -Werror=...), dropped with a note. */
static int keep_unknown(gx_options *out, const char *token, const char *name, gx_error *error)
{
    if (add(out->nvcc, &out->nvcc_count, token))
        return too_many(error);
    if (name[0] == 'W')
        note(out, token, "dropped: host compiler warning settings");
    else if (add(out->nvrtc, &out->nvrtc_count, token))
        return too_many(error);
    return GX_OK;
}

/* -Xptxas a,b: one --ptxas-options= per item. */
static int add_ptxas(gx_options *out, const char *value, gx_error *error)
{
    for (const char *p = value; *p;) {
        size_t n = strcspn(p, ",");
        char item[256];
        snprintf(item, sizeof item, "%.*s", (int)n, p);
        if (item[0] && add_pair(out->nvrtc, &out->nvrtc_count, "--ptxas-options", item))
            return too_many(error);
        p += n;
        if (*p == ',')
            p++;
    }
    return GX_OK;
}

/* -gencode arch=compute_XY,code=sm_XY: the builds of its code= (not of an arch=...code= inside a word). */
static int add_gencode(gx_options *out, const char *value, const char *shown, gx_error *error)
{
    const char *code = strstr(value, "code=");
    while (code && code > value && code[-1] != ',' && code[-1] != ' ')
        code = strstr(code + 5, "code=");
    const char *arch = strstr(value, "arch=");
    if (!code || !arch)
        return gx_fail(error, GX_ERR_USAGE, "compile: %s: expected arch=compute_XY,code=sm_XY", shown);
    add_targets(out, code + 5);
    return GX_OK;
}

/* -Xcudafe: its diagnostics suppression maps to NVRTC's; the rest of the front end's options are dropped. */
static int add_cudafe(gx_options *out, const char *value, const char *shown, gx_error *error)
{
    const char *diag = strstr(value, "diag_suppress");
    if (!diag)
        diag = strstr(value, "diag-suppress");
    if (diag && (diag[13] == '=' || diag[13] == ' ')) {
        if (add_pair(out->nvrtc, &out->nvrtc_count, "--diag-suppress", diag + 14))
            return too_many(error);
        note(out, shown, "mapped to --diag-suppress");
    } else {
        note(out, shown, "dropped: a front-end option NVRTC does not take");
    }
    return GX_OK;
}

/* The architecture options seen so far: -arch's value, and whether -code named the builds. */
typedef struct builds {
    const char *arch;
    int code_given;
} builds;

/* What an option a rule knows makes for NVRTC: an option, a note, a define, an include folder,
   builds, or a refusal. token: as written; name: without its dashes; shown: as the notes show it. */
static int apply_rule(gx_options *out, builds *builds, const option_rule *rule, const char *token, const char *name,
                      const char *value, const char *shown, gx_error *error)
{
    switch (rule->kind) {
    case OPTION_PASS:
        if (add_pair(out->nvrtc, &out->nvrtc_count, rule->nvrtc, rule->takes_value ? value : NULL))
            return too_many(error);
        if (rule->note)
            note(out, shown, rule->note);
        return GX_OK;
    case OPTION_DROP: note(out, shown, rule->note); return GX_OK;
    case OPTION_REFUSE:
        return gx_fail(error, GX_ERR_USAGE, "compile: option %s cannot be used with NVRTC: %s", token, rule->note);
    case OPTION_PTXAS: return add_ptxas(out, value, error);
    case OPTION_DEFINE: {
        char text[1024];
        snprintf(text, sizeof text, "-%c%s", (name[0] == 'U' || strncmp(name, "undefine", 8) == 0) ? 'U' : 'D', value);
        return add(out->nvrtc, &out->nvrtc_count, text) ? too_many(error) : GX_OK;
    }
    case OPTION_INCLUDE: return add(out->includes, &out->include_count, value) ? too_many(error) : GX_OK;
    case OPTION_ARCH: builds->arch = value; return GX_OK;
    case OPTION_CODE:
        builds->code_given = 1;
        add_targets(out, value);
        return GX_OK;
    case OPTION_GENCODE: return add_gencode(out, value, shown, error);
    case OPTION_CUDAFE: return add_cudafe(out, value, shown, error);
    case OPTION_RDC:
        if (strcmp(value, "true") == 0)
            return gx_fail(error, GX_ERR_USAGE, "compile: option %s cannot be used with NVRTC: %s", shown,
                           "separate compilation needs a device link step, which NVRTC does not do: build with "
                           "nvcc and load the linked cubin with gpuexp.load{file = ...}");
        return GX_OK;
    }
    return GX_OK;
}

/* Translates options[*i] (and its value, when that is the next argument: *i moves past it). */
static int translate_one(const char *const *options, int count, int *i, int for_nvcc, gx_options *out, builds *builds,
                         gx_error *error)
{
    const char *token = options[*i];
    if (token[0] != '-') { /* a value out of place, or a file: the compiler decides */
        if (add(out->nvrtc, &out->nvrtc_count, token) || add(out->nvcc, &out->nvcc_count, token))
            return too_many(error);
        return GX_OK;
    }
    const char *name = token + (token[1] == '-' ? 2 : 1);
    const char *equals = strchr(name, '=');
    size_t length = equals ? (size_t)(equals - name) : strlen(name);
    const char *value = equals ? equals + 1 : NULL;
    const option_rule *rule = find_rule(name, &length, &value);
    if (!rule)
        return keep_unknown(out, token, name, error);
    if (rule->takes_value && !value) {
        if (*i + 1 >= count)
            return gx_fail(error, GX_ERR_USAGE, "compile: option %s needs a value (as %s=V or %s V)", token, token,
                           token);
        value = options[++*i];
        if (rule->nvcc_keeps && (add(out->nvcc, &out->nvcc_count, token) || add(out->nvcc, &out->nvcc_count, value)))
            return too_many(error);
    } else if (rule->nvcc_keeps && add(out->nvcc, &out->nvcc_count, token)) {
        return too_many(error);
    }
    if (for_nvcc && (rule->kind == OPTION_REFUSE || rule->kind == OPTION_RDC))
        return GX_OK; /* nvcc takes them itself */
    char shown[160];
    snprintf(shown, sizeof shown, "%s%s%s", token, value && !equals && length != 1 ? " " : "",
             value && !equals && length != 1 ? value : "");
    return apply_rule(out, builds, rule, token, name, value, shown, error);
}

int gx_options_translate(const char *const *options, int count, int for_nvcc, gx_options *out, gx_error *error)
{
    memset(out, 0, sizeof *out);
    builds builds = {NULL, 0};
    for (int i = 0; i < count; i++) {
        int status = translate_one(options, count, &i, for_nvcc, out, &builds, error);
        if (status != GX_OK) {
            gx_options_free(out);
            return status;
        }
    }
    if (builds.arch && !builds.code_given) /* with -code, -arch names only the virtual architecture */
        add_arch(out, builds.arch);
    return GX_OK;
}

void gx_options_free(gx_options *options)
{
    for (int i = 0; i < options->nvrtc_count; i++)
        free(options->nvrtc[i]);
    for (int i = 0; i < options->include_count; i++)
        free(options->includes[i]);
    for (int i = 0; i < options->nvcc_count; i++)
        free(options->nvcc[i]);
    options->nvrtc_count = options->include_count = options->nvcc_count = 0;
}

/* "sm_90a" -> 90 and suffix 'a'; returns 0 when not of the form PREFIX + digits. */
static int arch_number(const char *text, const char *prefix, int *number, char *suffix)
{
    size_t n = strlen(prefix);
    if (strncmp(text, prefix, n) != 0)
        return 0;
    char *end;
    long value = strtol(text + n, &end, 10);
    if (end == text + n || value < 10 || (*end && end[1]))
        return 0;
    *number = (int)value;
    *suffix = *end;
    return 1;
}

int gx_options_pick_arch(const gx_options *options, const char *device_arch, char *out, size_t size, gx_error *error)
{
    int device;
    char device_suffix;
    if (!arch_number(device_arch, "sm_", &device, &device_suffix))
        return gx_fail(error, GX_ERR_USAGE, "compile: '%s' is not an sm_XY architecture", device_arch);
    int best_sass = -1, best_ptx = -1;
    char best_sass_suffix = 0, best_ptx_suffix = 0;
    for (int i = 0; i < options->target_count; i++) {
        const char *target = options->targets[i];
        int number;
        char suffix;
        if (strcmp(target, "native") == 0 || strcmp(target, "all") == 0) {
            snprintf(out, size, "%s", device_arch);
            return GX_OK;
        }
        if (arch_number(target, "sm_", &number, &suffix)) {
            /* SASS runs on the same major version with an equal or newer minor; 'a' and 'f'
               builds only on their own architecture */
            int runs = suffix ? number == device : number / 10 == device / 10 && number <= device;
            if (runs && number > best_sass)
                best_sass = number, best_sass_suffix = suffix;
        } else if (arch_number(target, "compute_", &number, &suffix)) {
            int runs = suffix ? number == device : number <= device;
            if (runs && number > best_ptx)
                best_ptx = number, best_ptx_suffix = suffix;
        }
    }
    if (options->target_count == 0)
        snprintf(out, size, "%s", device_arch);
    else if (best_sass >= 0)
        snprintf(out, size, "sm_%d%s", best_sass, best_sass_suffix ? (char[2]){best_sass_suffix, 0} : "");
    else if (best_ptx >= 0)
        snprintf(out, size, "compute_%d%s", best_ptx, best_ptx_suffix ? (char[2]){best_ptx_suffix, 0} : "");
    else {
        char list[512] = "";
        for (int i = 0; i < options->target_count; i++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", options->targets[i]);
        return gx_fail(error, GX_ERR_USAGE,
                       "compile: the options build %s, and none of it runs on %s (a cubin runs on its own major "
                       "version with an equal or newer minor, PTX on its architecture or newer): nvcc's binary "
                       "would not run here either; add this GPU's architecture or give compile{arch = ...}",
                       list, device_arch);
    }
    return GX_OK;
}
