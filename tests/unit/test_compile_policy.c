/* The compile policy in the core (gx_compile.c): the architecture chosen for a compile and the
   notes that say why, the script's defines sorted for the cache key, and where the cubin cache is
   (cache = false and GPUEXP_NO_CACHE turn it off). No GPU, no NVRTC, no Lua. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gx_compile.h"
#include "gx_options.h"

#include "check.h"

static void translate(const char *const *options, int count, gx_options *out)
{
    gx_error error;
    if (gx_options_translate(options, count, 0, out, &error) != GX_OK) {
        fprintf(stderr, "gx_options_translate: %s\n", error.message);
        exit(1);
    }
}

static void choose_arch(void)
{
    char arch[24], notes[2048];
    gx_error error;
    gx_options none, builds;
    translate(NULL, 0, &none);
    /* no options, no arch given: the device's own */
    CHECK(gx_compile_choose_arch(&none, NULL, "sm_90", arch, sizeof arch, notes, sizeof notes, &error) == GX_OK);
    CHECK(strcmp(arch, "sm_90") == 0 && strcmp(notes, "") == 0);
    /* arch given wins, with nothing to say when the options name no architecture */
    CHECK(gx_compile_choose_arch(&none, "sm_80", "", arch, sizeof arch, notes, sizeof notes, &error) == GX_OK);
    CHECK(strcmp(arch, "sm_80") == 0 && strcmp(notes, "") == 0);
    /* the options' builds: the one the device would run, and a note saying so */
    const char *gencode[] = {"-gencode", "arch=compute_80,code=sm_80", "-gencode=arch=compute_90,code=compute_90"};
    translate(gencode, 3, &builds);
    CHECK(gx_compile_choose_arch(&builds, NULL, "sm_86", arch, sizeof arch, notes, sizeof notes, &error) == GX_OK);
    CHECK(strcmp(arch, "sm_80") == 0);
    CHECK(strcmp(notes, "compiled for sm_80, the build of the options that sm_86 would run") == 0);
    CHECK(gx_compile_choose_arch(&builds, NULL, "sm_100", arch, sizeof arch, notes, sizeof notes, &error) == GX_OK);
    CHECK(strcmp(arch, "compute_90") == 0);
    CHECK(strcmp(notes, "compiled for compute_90, the build of the options that sm_100 would run (its PTX, compiled "
                        "by the driver at load)") == 0);
    /* the same build as the device: no note */
    CHECK(gx_compile_choose_arch(&builds, NULL, "sm_80", arch, sizeof arch, notes, sizeof notes, &error) == GX_OK);
    CHECK(strcmp(arch, "sm_80") == 0 && strcmp(notes, "") == 0);
    /* arch given over the options' builds: said */
    CHECK(gx_compile_choose_arch(&builds, "sm_90", "", arch, sizeof arch, notes, sizeof notes, &error) == GX_OK);
    CHECK(strcmp(arch, "sm_90") == 0);
    CHECK(strcmp(notes, "arch = sm_90 given: the options' architectures are not used") == 0);
    /* no build runs on the device */
    CHECK(gx_compile_choose_arch(&builds, NULL, "sm_75", arch, sizeof arch, notes, sizeof notes, &error) ==
          GX_ERR_USAGE);
    CHECK(strstr(error.message, "none of it runs on sm_75") != NULL);
    /* an architecture that is not one */
    CHECK(gx_compile_choose_arch(&none, "gfx90a", "", arch, sizeof arch, notes, sizeof notes, &error) == GX_ERR_USAGE);
    CHECK(strcmp(error.message, "compile: arch must look like 'sm_90', got 'gfx90a'") == 0);
    /* the options' own notes come first, the architecture's after them */
    const char *noted[] = {"-O3", "-arch=sm_80"};
    gx_options with_notes;
    translate(noted, 2, &with_notes);
    CHECK(gx_compile_choose_arch(&with_notes, "sm_90", "", arch, sizeof arch, notes, sizeof notes, &error) == GX_OK);
    CHECK(strncmp(notes, with_notes.notes, strlen(with_notes.notes)) == 0 && with_notes.notes[0]);
    CHECK(strstr(notes, "; arch = sm_90 given: the options' architectures are not used") != NULL);
    gx_options_free(&none);
    gx_options_free(&builds);
    gx_options_free(&with_notes);
}

static void sort_options(void)
{
    const char *options[] = {"-DZ=1", "-DA", "-DM=x", "-DA=2"};
    gx_compile_sort_options(options, 4);
    CHECK(strcmp(options[0], "-DA") == 0 && strcmp(options[1], "-DA=2") == 0 && strcmp(options[2], "-DM=x") == 0 &&
          strcmp(options[3], "-DZ=1") == 0);
    gx_compile_sort_options(options, 0); /* nothing to sort */
}

static void cache_directory(void)
{
    char out[512];
    setenv("GPUEXP_CACHE_DIR", "/var/tmp/gx-policy-cache", 1);
    unsetenv("GPUEXP_NO_CACHE");
    gx_compile_cache_directory(1, out, sizeof out);
    CHECK(strcmp(out, "/var/tmp/gx-policy-cache/cubin") == 0);
    gx_compile_cache_directory(0, out, sizeof out); /* cache = false */
    CHECK(strcmp(out, "") == 0);
    setenv("GPUEXP_NO_CACHE", "1", 1);
    gx_compile_cache_directory(1, out, sizeof out);
    CHECK(strcmp(out, "") == 0);
    setenv("GPUEXP_NO_CACHE", "0", 1); /* "0" and "" leave it on */
    gx_compile_cache_directory(1, out, sizeof out);
    CHECK(strcmp(out, "/var/tmp/gx-policy-cache/cubin") == 0);
    setenv("GPUEXP_NO_CACHE", "", 1);
    gx_compile_cache_directory(1, out, sizeof out);
    CHECK(strcmp(out, "/var/tmp/gx-policy-cache/cubin") == 0);
}

int main(void)
{
    choose_arch();
    sort_options();
    cache_directory();
    if (failures)
        fprintf(stderr, "%d check(s) failed\n", failures);
    else
        printf("ok compile policy\n");
    return failures ? 1 : 0;
}
