/* What every compiler route shares: the cache key (source, headers, options, architecture,
   compiler), the on-disk cubin cache with its manifest, and the compile result. */
#include "gx_compile.h"

#include "gx_binary.h"
#include "gx_cxxname.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "gx_cache.h"
#include "gx_files.h"

struct include_walk {
    XXH3_state_t *state;
    const gx_compile_request *request;
    char seen[128][512];
    int seen_count;
};

static void hash_string(XXH3_state_t *state, const char *text)
{
    XXH3_128bits_update(state, text, strlen(text) + 1); /* the NUL separates fields */
}

static void hash_includes(struct include_walk *walk, const char *text, const char *directory, int depth)
{
    if (depth > 16)
        return;
    for (const char *p = strstr(text, "#include"); p; p = strstr(p + 8, "#include")) {
        const char *q = p + 8;
        while (*q == ' ' || *q == '\t')
            q++;
        if (*q != '"' && *q != '<')
            continue;
        char close = *q == '"' ? '"' : '>';
        const char *end = strchr(q + 1, close);
        const char *newline = strchr(q + 1, '\n');
        if (!end || (newline && newline < end) || end - q - 1 >= 256)
            continue;
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)(end - q - 1), q + 1);
        const char *search[66];
        int count = 0;
        if (directory)
            search[count++] = directory;
        for (int i = 0; i < walk->request->include_directory_count && count < 66; i++)
            search[count++] = walk->request->include_directories[i];
        for (int i = 0; i < count; i++) {
            char path[512];
            snprintf(path, sizeof path, "%s/%s", search[i], name);
            char *contents;
            size_t size;
            gx_error ignored;
            if (gx_read_file(path, &contents, &size, &ignored))
                continue;
            int already = 0;
            for (int s = 0; s < walk->seen_count; s++)
                already |= strcmp(walk->seen[s], path) == 0;
            if (!already && walk->seen_count < 128) {
                snprintf(walk->seen[walk->seen_count++], 512, "%s", path);
                hash_string(walk->state, name);
                XXH3_128bits_update(walk->state, contents, size);
                char here[512];
                snprintf(here, sizeof here, "%s", path);
                char *slash = strrchr(here, '/');
                if (slash)
                    *slash = 0;
                hash_includes(walk, contents, here, depth + 1);
            }
            free(contents);
            break; /* the first directory that has it wins, as in the compiler */
        }
    }
}

/* The source key hashes what the kernel is (source, headers, options, names); the cache key adds
   where it was compiled for (architecture, NVRTC version and the cache format). */
void gx_compile_keys(const gx_compile_request *request, const char *compiler, char key[33], char source_key[33])
{
    struct include_walk *walk = calloc(1, sizeof *walk);
    XXH3_state_t *state = XXH3_createState();
    XXH3_128bits_reset(state);
    int line_table = 0;
    for (int i = 0; i < request->option_count; i++) {
        hash_string(state, request->options[i]);
        line_table |= strcmp(request->options[i], "--generate-line-info") == 0 ||
                      strcmp(request->options[i], "-lineinfo") == 0 || strcmp(request->options[i], "-G") == 0 ||
                      strcmp(request->options[i], "--device-debug") == 0;
    }
    /* a line table names the source file: a cubin compiled as a.cu is not b.cu's (line profiles) */
    if (line_table)
        hash_string(state, request->source_name ? request->source_name : "");
    for (int i = 0; i < request->name_expression_count; i++)
        hash_string(state, request->name_expressions[i]);
    hash_string(state, request->toolkit_stamp ? request->toolkit_stamp : "");
    hash_string(state, request->source);
    if (walk) {
        walk->state = state;
        walk->request = request;
        hash_includes(walk, request->source, request->source_directory, 0);
    }
    XXH128_hash_t hash = XXH3_128bits_digest(state);
    snprintf(source_key, 33, "%016llx%016llx", (unsigned long long)hash.high64, (unsigned long long)hash.low64);
    XXH3_128bits_reset(state);
    hash_string(state, "gpuexp-cubin-v2");
    hash_string(state, compiler);
    hash_string(state, request->arch);
    hash_string(state, source_key);
    hash = XXH3_128bits_digest(state);
    snprintf(key, 33, "%016llx%016llx", (unsigned long long)hash.high64, (unsigned long long)hash.low64);
    XXH3_freeState(state);
    free(walk);
}

static void cache_path(char *out, size_t size, const char *directory, const char *key, const char *extension)
{
    snprintf(out, size, "%s/%.2s/%s.%s", directory, key, key, extension);
}

static const char *const cache_extensions[] = {"cubin", "ptx", "log", "names"};

/* "<size> <xxh64>" of the four parts, one per line: written last, it marks a complete entry. */
static void cache_manifest(char *out, size_t size, char *const data[4], const size_t sizes[4])
{
    out[0] = 0;
    for (int i = 0; i < 4; i++)
        snprintf(out + strlen(out), size - strlen(out), "%s %zu %016llx\n", cache_extensions[i], sizes[i],
                 (unsigned long long)XXH3_64bits(data[i], sizes[i]));
}

/* A hit only when every part is there and matches the manifest; a damaged entry is compiled
   again, with a warning for the caller to show. */
int gx_compile_cache_load(const gx_compile_request *request, gx_compile_result *result)
{
    if (!request->cache_directory || !*request->cache_directory)
        return -1;
    char *data[4] = {0}, *manifest = NULL;
    size_t sizes[4] = {0}, manifest_size = 0;
    char path[4096];
    gx_error ignored;
    cache_path(path, sizeof path, request->cache_directory, result->key, "sum");
    if (gx_read_file(path, &manifest, &manifest_size, &ignored))
        return -1; /* no entry (or one from before manifests): a plain miss */
    int missing = 0;
    for (int i = 0; i < 4; i++) {
        cache_path(path, sizeof path, request->cache_directory, result->key, cache_extensions[i]);
        if (gx_read_file(path, &data[i], &sizes[i], &ignored))
            missing = 1;
    }
    char expected[512];
    if (!missing)
        cache_manifest(expected, sizeof expected, data, sizes);
    if (missing || strcmp(expected, manifest) != 0) {
        char found[128] = "a part is missing";
        if (!missing) {
            unsigned long long want_size = 0;
            const char *line = strstr(manifest, "cubin ");
            if (line)
                sscanf(line, "cubin %llu", &want_size);
            snprintf(found, sizeof found, "cubin %zu bytes, the manifest says %llu, or a part's hash differs", sizes[0],
                     want_size);
        }
        snprintf(result->cache_warning, sizeof result->cache_warning,
                 "the cached build %.2s/%s in %s was damaged (%s); compiled again", result->key, result->key,
                 request->cache_directory, found);
        for (int i = 0; i < 4; i++)
            free(data[i]);
        free(manifest);
        return -1;
    }
    free(manifest);
    result->cubin = data[0];
    result->cubin_size = sizes[0];
    result->ptx = data[1];
    result->log = data[2];
    result->lowered_names = data[3];
    result->from_cache = 1;
    return 0;
}

/* A failed cache write costs only a recompile later, so it is not an error: it is said in
   result->cache_store_warning, for the caller to warn about (once). */
void gx_compile_cache_store(const gx_compile_request *request, gx_compile_result *result)
{
    result->cache_store_warning[0] = 0;
    if (!request->cache_directory || !*request->cache_directory)
        return;
    char directory[4096];
    gx_error problem;
    snprintf(directory, sizeof directory, "%s/%.2s", request->cache_directory, result->key);
    int failed = gx_make_directories(directory, &problem);
    char *data[] = {result->cubin, result->ptx, result->log, result->lowered_names};
    size_t sizes[] = {result->cubin_size, strlen(result->ptx), strlen(result->log), strlen(result->lowered_names)};
    char path[4096];
    for (int i = 0; i < 4 && !failed; i++) {
        cache_path(path, sizeof path, request->cache_directory, result->key, cache_extensions[i]);
        failed = gx_write_file_atomic(path, data[i], sizes[i], &problem);
    }
    if (!failed) {
        char manifest[512]; /* last: it marks the entry complete */
        cache_manifest(manifest, sizeof manifest, data, sizes);
        cache_path(path, sizeof path, request->cache_directory, result->key, "sum");
        failed = gx_write_file_atomic(path, manifest, strlen(manifest), &problem);
    }
    if (failed)
        snprintf(
            result->cache_store_warning, sizeof result->cache_store_warning,
            "the compile cache %.160s cannot be written (%.200s): every run compiles again (GPUEXP_CACHE_DIR names "
            "another folder)",
            request->cache_directory, problem.message);
}

/* A compile error is as much a function of the key as a cubin is: kept as KEY.fail (the error's
   message), so that a source that does not compile fails at once the next time, with the same
   message (a tune's compile helpers reach a configuration first; its run then needs only the error).
   0 when none is kept; else the error, set from the kept message (GX_ERR_COMPILE). */
int gx_compile_cache_failure(const gx_compile_request *request, const char *key, gx_error *error)
{
    if (!request->cache_directory || !*request->cache_directory)
        return 0;
    char path[4096], *text = NULL;
    size_t size = 0;
    gx_error ignored;
    cache_path(path, sizeof path, request->cache_directory, key, "fail");
    if (gx_read_file(path, &text, &size, &ignored))
        return 0;
    gx_fail(error, GX_ERR_COMPILE, "%s", text);
    gx_error_append(error, "\n(kept in the compile cache: %s)", path);
    free(text);
    return error->kind;
}

/* Keeps a compile error (GX_ERR_COMPILE only: a missing library or memory is not the source's) for
   gx_compile_cache_failure; a failed write is ignored (the next run compiles it again). */
void gx_compile_cache_store_failure(const gx_compile_request *request, const char *key, const gx_error *error)
{
    if (error->kind != GX_ERR_COMPILE || !request->cache_directory || !*request->cache_directory)
        return;
    char directory[4096], path[4096];
    gx_error ignored;
    snprintf(directory, sizeof directory, "%s/%.2s", request->cache_directory, key);
    cache_path(path, sizeof path, request->cache_directory, key, "fail");
    if (!gx_make_directories(directory, &ignored))
        gx_write_file_atomic(path, error->message, strlen(error->message), &ignored);
}

void gx_compile_result_free(gx_compile_result *result)
{
    free(result->cubin);
    free(result->ptx);
    free(result->log);
    free(result->lowered_names);
    result->cubin = result->ptx = result->log = result->lowered_names = NULL;
}

const char *gx_compile_lowered_name(const gx_compile_result *result, const char *expression, char *buffer, size_t size)
{
    /* the expression as given, else as written another way (canonical forms equal) */
    char wanted[2048], given[2048], canonical[2048];
    gx_cxx_normalize(expression, wanted, sizeof wanted);
    size_t length = strlen(expression);
    for (int pass = 0; pass < 2; pass++) {
        for (const char *line = result->lowered_names; line && *line;) {
            const char *tab = strchr(line, '\t');
            const char *end = strchr(line, '\n');
            if (!tab || !end)
                break;
            int match;
            if (pass == 0) {
                match = (size_t)(tab - line) == length && strncmp(line, expression, length) == 0;
            } else {
                snprintf(given, sizeof given, "%.*s", (int)(tab - line), line);
                gx_cxx_normalize(given, canonical, sizeof canonical);
                match = strcmp(canonical, wanted) == 0;
            }
            if (match) {
                snprintf(buffer, size, "%.*s", (int)(end - tab - 1), tab + 1);
                return buffer;
            }
            line = end + 1;
        }
    }
    return NULL;
}

int gx_compile_choose_arch(const gx_options *options, const char *given, const char *device_arch, char *arch,
                           size_t arch_size, char *notes, size_t notes_size, gx_error *error)
{
    snprintf(notes, notes_size, "%s", options->notes);
    if (given) {
        snprintf(arch, arch_size, "%s", given);
        if (options->target_count)
            snprintf(notes + strlen(notes), notes_size - strlen(notes),
                     "%sarch = %s given: the options' "
                     "architectures are not used",
                     notes[0] ? "; " : "", given);
    } else {
        if (gx_options_pick_arch(options, device_arch, arch, arch_size, error))
            return error->kind;
        if (strcmp(arch, device_arch) != 0)
            snprintf(notes + strlen(notes), notes_size - strlen(notes),
                     "%scompiled for %s, the build of the "
                     "options that %s would run%s",
                     notes[0] ? "; " : "", arch, device_arch,
                     strncmp(arch, "compute_", 8) == 0 ? " (its PTX, compiled by the driver at load)" : "");
    }
    if (strncmp(arch, "sm_", 3) != 0 && strncmp(arch, "compute_", 8) != 0)
        return gx_fail(error, GX_ERR_USAGE, "compile: arch must look like 'sm_90', got '%s'", arch);
    return GX_OK;
}

void gx_compile_sort_options(const char **options, int count)
{
    for (int i = 0; i < count; i++)
        for (int j = i + 1; j < count; j++)
            if (strcmp(options[j], options[i]) < 0) {
                const char *t = options[i];
                options[i] = options[j];
                options[j] = t;
            }
}

void gx_compile_cache_directory(int wanted, char *out, size_t size)
{
    const char *no_cache = getenv("GPUEXP_NO_CACHE");
    out[0] = 0;
    if (!wanted || (no_cache && *no_cache && strcmp(no_cache, "0") != 0))
        return;
    gx_cache_directory(out, size);
    if (out[0])
        strncat(out, "/cubin", size - strlen(out) - 1);
}

int gx_compile_check_names(const gx_compile_request *request, const gx_compile_result *result, gx_error *error)
{
    if (!request->name_expression_count)
        return GX_OK;
    gx_image_kernels kernels;
    memset(&kernels, 0, sizeof kernels);
    if (result->cubin_size && gx_image_list_kernels(result->cubin, result->cubin_size, &kernels, error))
        return error->kind;
    int status = GX_OK;
    for (int i = 0; status == GX_OK && i < request->name_expression_count; i++) {
        char symbol[1024];
        if (!gx_compile_lowered_name(result, request->name_expressions[i], symbol, sizeof symbol)) {
            status = gx_fail(error, GX_ERR_COMPILE, "the name '%s' given to compile{names=...} was not lowered in %s",
                             request->name_expressions[i], request->source_name);
            break;
        }
        int found = 0;
        for (int k = 0; k < kernels.count && !found; k++)
            found = strcmp(kernels.kernels[k].symbol, symbol) == 0;
        if (!result->cubin_size && result->ptx) { /* PTX alone: its entries */
            char entry[1100];
            snprintf(entry, sizeof entry, ".entry %s(", symbol);
            found = strstr(result->ptx, entry) != NULL;
        }
        if (!found)
            status = gx_fail(error, GX_ERR_COMPILE,
                             "kernel '%s' (symbol %s) is not in the %s compiled from %s: the name "
                             "was lowered but its instantiation did not reach the binary that is loaded",
                             request->name_expressions[i], symbol, result->cubin_size ? "cubin" : "PTX",
                             request->source_name);
    }
    gx_image_kernels_free(&kernels);
    return status;
}
