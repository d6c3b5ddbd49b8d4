/* Unit tests of what brings a team's own kernels in, with no GPU and no Lua: nvcc options made into
   NVRTC's, the architecture the driver would pick from a project's builds, C++ names, and the
   binaries other compilers make (file kinds, fat binaries inside a host ELF). */
#include <elf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gx_binary.h"
#include "gx_options.h"
#include "gx_symbols.h"
#include "gx_toolkit.h"

#include "check.h"

/* The NVRTC options joined by spaces. */
static const char *joined(char *const *list, int count)
{
    static char text[2048];
    text[0] = 0;
    for (int i = 0; i < count; i++)
        snprintf(text + strlen(text), sizeof text - strlen(text), "%s%s", i ? " " : "", list[i]);
    return text;
}

static void test_options(void)
{
    /* a project's nvcc line */
    const char *line[] = {"-O3",
                          "--use_fast_math",
                          "-Xptxas",
                          "-v,-O3",
                          "-lineinfo",
                          "--expt-relaxed-constexpr",
                          "-Wno-deprecated-gpu-targets",
                          "-std=c++17",
                          "-I",
                          "include",
                          "-Isrc",
                          "-DN=4",
                          "-D",
                          "M",
                          "-Xcompiler",
                          "-fopenmp",
                          "-gencode",
                          "arch=compute_80,code=sm_80",
                          "-gencode=arch=compute_90,code=[sm_90,compute_90]",
                          "-maxrregcount=64",
                          "-o",
                          "x.o",
                          "-c",
                          "--extended-lambda",
                          "-Xcudafe",
                          "--diag_suppress=177",
                          "--some-new-option"};
    gx_options out;
    gx_error error;
    CHECK(gx_options_translate(line, (int)(sizeof line / sizeof line[0]), 0, &out, &error) == GX_OK);
    CHECK(strcmp(joined(out.nvrtc, out.nvrtc_count),
                 "--use_fast_math --ptxas-options=-v --ptxas-options=-O3 --generate-line-info -default-device "
                 "--std=c++17 -DN=4 -DM --maxrregcount=64 --diag-suppress=177 --some-new-option") == 0);
    CHECK(out.include_count == 2 && strcmp(out.includes[0], "include") == 0 && strcmp(out.includes[1], "src") == 0);
    CHECK(out.target_count == 3 && strcmp(out.targets[0], "sm_80") == 0 && strcmp(out.targets[1], "sm_90") == 0 &&
          strcmp(out.targets[2], "compute_90") == 0);
    CHECK(strstr(out.notes, "-O3: dropped: it sets host code optimisation") != NULL);
    CHECK(strstr(out.notes, "--expt-relaxed-constexpr: mapped to -default-device") != NULL);
    CHECK(strstr(out.notes, "-Xcompiler -fopenmp: dropped") != NULL);
    CHECK(strstr(out.notes, "--extended-lambda: dropped") != NULL);
    /* nvcc keeps its own options, less the outputs, the architecture and -I */
    CHECK(strcmp(joined(out.nvcc, out.nvcc_count),
                 "-O3 --use_fast_math -Xptxas -v,-O3 -lineinfo --expt-relaxed-constexpr -Wno-deprecated-gpu-targets "
                 "-std=c++17 -DN=4 -D M -Xcompiler -fopenmp -maxrregcount=64 --extended-lambda -Xcudafe "
                 "--diag_suppress=177 --some-new-option") == 0);
    char arch[24];
    CHECK(gx_options_pick_arch(&out, "sm_90", arch, sizeof arch, &error) == GX_OK && strcmp(arch, "sm_90") == 0);
    CHECK(gx_options_pick_arch(&out, "sm_86", arch, sizeof arch, &error) == GX_OK && strcmp(arch, "sm_80") == 0);
    CHECK(gx_options_pick_arch(&out, "sm_100", arch, sizeof arch, &error) == GX_OK && strcmp(arch, "compute_90") == 0);
    CHECK(gx_options_pick_arch(&out, "sm_75", arch, sizeof arch, &error) == GX_ERR_USAGE);
    CHECK(strstr(error.message, "the options build sm_80, sm_90, compute_90, and none of it runs on sm_75") != NULL);
    gx_options_free(&out);

    /* refused, with the equivalent named */
    const char *rdc[] = {"-rdc=true"};
    CHECK(gx_options_translate(rdc, 1, 0, &out, &error) == GX_ERR_USAGE);
    CHECK(strstr(error.message, "-rdc=true cannot be used with NVRTC") && strstr(error.message, "gpuexp.load"));
    CHECK(gx_options_translate(rdc, 1, 1, &out, &error) == GX_OK && out.nvcc_count == 1); /* nvcc takes it */
    gx_options_free(&out);
    const char *dc[] = {"-dc"};
    CHECK(gx_options_translate(dc, 1, 0, &out, &error) == GX_ERR_USAGE);
    const char *dangling[] = {"-Xptxas"};
    CHECK(gx_options_translate(dangling, 1, 0, &out, &error) == GX_ERR_USAGE);
    CHECK(strstr(error.message, "option -Xptxas needs a value") != NULL);

    /* -arch=sm_XY is sm_XY and compute_XY; with -code, only what -code lists */
    const char *arch_only[] = {"-arch=sm_80"};
    CHECK(gx_options_translate(arch_only, 1, 0, &out, &error) == GX_OK && out.target_count == 2);
    CHECK(gx_options_pick_arch(&out, "sm_90", arch, sizeof arch, &error) == GX_OK && strcmp(arch, "compute_80") == 0);
    gx_options_free(&out);
    const char *with_code[] = {"-arch", "compute_80", "-code", "sm_80"};
    CHECK(gx_options_translate(with_code, 4, 0, &out, &error) == GX_OK && out.target_count == 1);
    CHECK(gx_options_pick_arch(&out, "sm_90", arch, sizeof arch, &error) == GX_ERR_USAGE);
    gx_options_free(&out);
    /* an architecture-specific build runs on its own architecture only */
    const char *specific[] = {"-gencode", "arch=compute_90a,code=sm_90a"};
    CHECK(gx_options_translate(specific, 2, 0, &out, &error) == GX_OK);
    CHECK(gx_options_pick_arch(&out, "sm_90", arch, sizeof arch, &error) == GX_OK && strcmp(arch, "sm_90a") == 0);
    gx_options_free(&out);
    /* undefines, glued and spelled out; a host warning setting and a front-end option dropped, noted */
    const char *misc[] = {"-UA", "--undefine-macro=B", "-Werror=all", "-Xcudafe", "--display_error_number"};
    CHECK(gx_options_translate(misc, 5, 0, &out, &error) == GX_OK);
    CHECK(strcmp(joined(out.nvrtc, out.nvrtc_count), "-UA -UB") == 0);
    CHECK(strstr(out.notes, "-Werror=all: dropped: host compiler warning settings") != NULL);
    CHECK(strstr(out.notes, "-Xcudafe --display_error_number: dropped: a front-end option") != NULL);
    gx_options_free(&out);
    const char *bad_gencode[] = {"-gencode=arch=compute_90"};
    CHECK(gx_options_translate(bad_gencode, 1, 0, &out, &error) == GX_ERR_USAGE);
    CHECK(strstr(error.message, "-gencode=arch=compute_90: expected arch=compute_XY,code=sm_XY") != NULL);
    /* more options than fit: an error that says so, and nothing left allocated (out freed: counts 0) */
    const char *many[GX_OPTIONS_MAX + 1];
    for (int i = 0; i <= GX_OPTIONS_MAX; i++)
        many[i] = "-lineinfo";
    CHECK(gx_options_translate(many, GX_OPTIONS_MAX + 1, 0, &out, &error) == GX_ERR_USAGE);
    CHECK(strstr(error.message, "compile: more than 256 options") != NULL);
    CHECK(out.nvrtc_count == 0 && out.nvcc_count == 0 && out.include_count == 0);
    const char *many_ptxas[] = {"-Xptxas", NULL};
    char *items = malloc(4 * (GX_OPTIONS_MAX + 1) + 1);
    items[0] = 0;
    for (int i = 0; i <= GX_OPTIONS_MAX; i++)
        strcat(items, i ? ",-v" : "-v");
    many_ptxas[1] = items;
    CHECK(gx_options_translate(many_ptxas, 2, 0, &out, &error) == GX_ERR_USAGE);
    CHECK(strstr(error.message, "compile: more than 256 options") != NULL && out.nvrtc_count == 0);
    free(items);
    const char *native[] = {"-arch=native"};
    CHECK(gx_options_translate(native, 1, 0, &out, &error) == GX_OK);
    CHECK(gx_options_pick_arch(&out, "sm_89", arch, sizeof arch, &error) == GX_OK && strcmp(arch, "sm_89") == 0);
    gx_options_free(&out);
}

static void test_symbols(void)
{
    const char *templated =
        "_ZN3own15sum_squares_cubILi256EEEvPfPKfm"; /* own::sum_squares_cub<256>(float*, float const*, unsigned long) */
    char *signature = gx_demangle(templated);
    if (!signature) { /* no C++ runtime to demangle with: only mangled names can match */
        fprintf(stderr, "note: no __cxa_demangle here; demangling checks skipped\n");
        CHECK(gx_symbol_matches(templated, templated));
        return;
    }
    CHECK(strcmp(signature, "void own::sum_squares_cub<256>(float*, float const*, unsigned long)") == 0);
    free(signature);
    char name[256];
    gx_symbol_name(templated, name, sizeof name);
    CHECK(strcmp(name, "own::sum_squares_cub<256>") == 0);
    gx_symbol_name("extern_c_kernel", name, sizeof name);
    CHECK(strcmp(name, "extern_c_kernel") == 0);
    CHECK(gx_symbol_matches(templated, "own::sum_squares_cub<256>"));
    CHECK(gx_symbol_matches(templated, "own::sum_squares_cub < 256 >"));
    CHECK(gx_symbol_matches(templated, "sum_squares_cub<256>"));
    CHECK(gx_symbol_matches(templated, "own::sum_squares_cub"));
    CHECK(gx_symbol_matches(templated, "sum_squares_cub"));
    CHECK(gx_symbol_matches(templated, "void own::sum_squares_cub<256>(float*, float const*, unsigned long)"));
    CHECK(!gx_symbol_matches(templated, "sum_squares"));
    CHECK(!gx_symbol_matches(templated, "wn::sum_squares_cub"));
    CHECK(!gx_symbol_matches(templated, "own::sum_squares_cub<128>"));
    const char *symbols[] = {"_Z3addPfPKfm", "_ZN3own15sum_squares_cubILi256EEEvPfPKfm",
                             "_ZN3own15sum_squares_cubILi128EEEvPfPKfm", "plain"};
    int first, second;
    CHECK(gx_symbol_find(symbols, 4, "add", &first, &second) == 0);
    CHECK(gx_symbol_find(symbols, 4, "plain", &first, &second) == 3);
    CHECK(gx_symbol_find(symbols, 4, "own::sum_squares_cub<128>", &first, &second) == 2);
    CHECK(gx_symbol_find(symbols, 4, "sum_squares_cub", &first, &second) == -2 && first == 1 && second == 2);
    CHECK(gx_symbol_find(symbols, 4, "nothing", &first, &second) == -1);
    CHECK(gx_symbol_find(symbols, 4, "_ZN3own15sum_squares_cubILi128EEEvPfPKfm", &first, &second) == 2);
}

/* A host ELF with a .nv_fatbin section holding two fat binaries (headers and payloads), padded. */
static unsigned char *host_elf(size_t *size, int with_fatbin)
{
    const char names[] = "\0.shstrtab\0.nv_fatbin\0__nv_relfatbin";
    unsigned char fatbins[96] = {0};
    uint32_t magic = 0xBA55ED50u;
    uint16_t version = 1, header = 16;
    uint64_t payload = 24; /* first: 16 + 24 = 40 bytes, padded to 40; second at 40 */
    memcpy(fatbins, &magic, 4), memcpy(fatbins + 4, &version, 2), memcpy(fatbins + 6, &header, 2),
        memcpy(fatbins + 8, &payload, 8);
    uint64_t payload2 = 36; /* second: 16 + 36 = 52 bytes */
    memcpy(fatbins + 40, &magic, 4), memcpy(fatbins + 44, &version, 2), memcpy(fatbins + 46, &header, 2),
        memcpy(fatbins + 48, &payload2, 8);
    size_t names_at = sizeof(Elf64_Ehdr), data_at = names_at + sizeof names,
           headers_at = (data_at + sizeof fatbins + 7) / 8 * 8;
    *size = headers_at + 3 * sizeof(Elf64_Shdr);
    unsigned char *file = calloc(1, *size);
    Elf64_Ehdr *e = (Elf64_Ehdr *)file;
    memcpy(e->e_ident, ELFMAG, SELFMAG);
    e->e_ident[EI_CLASS] = ELFCLASS64;
    e->e_machine = EM_X86_64;
    e->e_shoff = headers_at;
    e->e_shentsize = sizeof(Elf64_Shdr);
    e->e_shnum = 3;
    e->e_shstrndx = 1;
    memcpy(file + names_at, names, sizeof names);
    memcpy(file + data_at, fatbins, sizeof fatbins);
    Elf64_Shdr *s = (Elf64_Shdr *)(file + headers_at);
    s[1] = (Elf64_Shdr){.sh_name = 1, .sh_type = SHT_STRTAB, .sh_offset = names_at, .sh_size = sizeof names};
    s[2] = (Elf64_Shdr){
        .sh_name = with_fatbin ? 11 : 22, .sh_type = SHT_PROGBITS, .sh_offset = data_at, .sh_size = sizeof fatbins};
    return file;
}

static void test_binaries(void)
{
    unsigned char fatbin[32] = {0x50, 0xED, 0x55, 0xBA};
    CHECK(gx_image_detect(fatbin, sizeof fatbin) == GX_IMAGE_FATBIN);
    const char ptx[] = "//\n// Generated by NVIDIA NVVM Compiler\n.version 9.0\n.target sm_90\n.address_size 64\n";
    CHECK(gx_image_detect(ptx, sizeof ptx - 1) == GX_IMAGE_PTX);
    CHECK(gx_image_detect("__global__ void k() {}", 22) == GX_IMAGE_UNKNOWN);
    size_t size;
    unsigned char *file = host_elf(&size, 1);
    CHECK(gx_image_detect(file, size) == GX_IMAGE_HOST_ELF);
    ((Elf64_Ehdr *)file)->e_machine = 190; /* EM_CUDA: a cubin */
    CHECK(gx_image_detect(file, size) == GX_IMAGE_CUBIN);
    ((Elf64_Ehdr *)file)->e_machine = EM_X86_64;
    size_t offsets[GX_MAX_IMAGES], sizes[GX_MAX_IMAGES];
    int count;
    gx_error error;
    CHECK(gx_host_fatbins(file, size, offsets, sizes, &count, &error) == GX_OK);
    CHECK(count == 2 && sizes[0] == 40 && sizes[1] == 52 && offsets[1] == offsets[0] + 40);
    /* a payload running past the section is refused, not read */
    uint64_t too_long = 1000;
    memcpy(file + offsets[1] + 8, &too_long, 8);
    CHECK(gx_host_fatbins(file, size, offsets, sizes, &count, &error) == GX_ERR_USAGE);
    CHECK(strstr(error.message, "cut short") != NULL);
    /* a header larger than what is left of the section: end - at - header_size must not wrap into
       a size that claims bytes past the buffer (issue 25, a crafted object file) */
    uint64_t no_payload = 0;
    uint16_t huge_header = 0xFFFF;
    memcpy(file + offsets[1] + 8, &no_payload, 8);
    memcpy(file + offsets[1] + 6, &huge_header, 2);
    CHECK(gx_host_fatbins(file, size, offsets, sizes, &count, &error) == GX_ERR_USAGE);
    CHECK(strstr(error.message, "cut short") != NULL);
    free(file);
    /* found by tests/fuzz: the fat binary magic and 11 bytes more was read past its end (the
       sanitizer job sees the read; here the answer) */
    static const unsigned char short_fatbin[15] = {0x50, 0xed, 0x55, 0xba, 'e',  'r', 's', 'i',
                                                   'o',  'n',  0xc1, 0,    0x7f, 'E', 'L'};
    unsigned char *exact = malloc(sizeof short_fatbin);
    memcpy(exact, short_fatbin, sizeof short_fatbin);
    gx_image_kernels listed;
    CHECK(gx_image_list_kernels(exact, sizeof short_fatbin, &listed, &error) == GX_ERR_USAGE);
    CHECK(strstr(error.message, "cut short") != NULL);
    free(exact);
    file = host_elf(&size, 0); /* only relocatable device code */
    CHECK(gx_host_fatbins(file, size, offsets, sizes, &count, &error) == GX_ERR_USAGE);
    CHECK(strstr(error.message, "-rdc=true") != NULL);
    /* a truncated file: its section headers are outside it */
    CHECK(gx_host_fatbins(file, size - 8, offsets, sizes, &count, &error) == GX_ERR_USAGE);
    free(file);
}

static void test_toolkit(void)
{
    const gx_toolkit *t = gx_toolkit_get();
    CHECK(t->stamp[0] != 0);
    if (!t->root[0]) {
        fprintf(stderr, "note: no CUDA toolkit headers here (%s); toolkit checks skipped\n", t->searched);
        return;
    }
    const char *folders[2];
    CHECK(gx_toolkit_include_directories(t, folders) >= 1 && strcmp(folders[0], t->include) == 0);
    char missing[1024], packages[256];
    int count = gx_toolkit_missing(t, missing, sizeof missing, packages, sizeof packages);
    CHECK(count == 0 || (missing[0] && packages[0]));
}

int main(void)
{
    test_options();
    test_symbols();
    test_binaries();
    test_toolkit();
    printf("%d checks, %d failed\n", checks, failures);
    return failures ? 1 : 0;
}
