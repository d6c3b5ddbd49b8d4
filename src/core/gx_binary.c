#include "gx_binary.h"

#include <elf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FATBIN_MAGIC 0xBA55ED50u
#ifndef EM_CUDA
#define EM_CUDA 190
#endif

const char *gx_image_kind_name(gx_image_kind kind)
{
    static const char *const names[] = {"unknown", "cubin", "fatbin", "ptx", "host binary"};
    return names[kind];
}

static int is_elf64(const void *data, size_t size)
{
    const unsigned char *bytes = data;
    return size >= sizeof(Elf64_Ehdr) && memcmp(bytes, ELFMAG, SELFMAG) == 0 && bytes[EI_CLASS] == ELFCLASS64;
}

/* PTX is text whose first directives are .version and .target (after comments). */
static int looks_like_ptx(const char *text, size_t size)
{
    size_t limit = size < 65536 ? size : 65536;
    for (size_t i = 0; i < limit; i++)
        if (text[i] == 0)
            return 0;
    const char *end = text + limit;
    const char *version = memmem(text, limit, ".version", 8);
    return version && memmem(version, (size_t)(end - version), ".target", 7) != NULL;
}

gx_image_kind gx_image_detect(const void *data, size_t size)
{
    if (size >= 4) {
        uint32_t magic;
        memcpy(&magic, data, 4);
        if (magic == FATBIN_MAGIC)
            return GX_IMAGE_FATBIN;
    }
    if (is_elf64(data, size)) {
        Elf64_Ehdr header;
        memcpy(&header, data, sizeof header);
        return header.e_machine == EM_CUDA ? GX_IMAGE_CUBIN : GX_IMAGE_HOST_ELF;
    }
    return looks_like_ptx(data, size) ? GX_IMAGE_PTX : GX_IMAGE_UNKNOWN;
}

/* Finds the section called name: fills *found and returns 1, or 0. Bounds are checked, and the
   headers are copied out (a file's offsets need not be aligned). */
static int find_section(const unsigned char *data, size_t size, const char *name, Elf64_Shdr *found)
{
    Elf64_Ehdr header;
    memcpy(&header, data, sizeof header);
    if (header.e_shoff == 0 || header.e_shentsize != sizeof(Elf64_Shdr) || header.e_shoff > size ||
        (size - header.e_shoff) / sizeof(Elf64_Shdr) < header.e_shnum || header.e_shstrndx >= header.e_shnum)
        return 0;
    const unsigned char *sections = data + header.e_shoff;
    Elf64_Shdr names, section;
    memcpy(&names, sections + (size_t)header.e_shstrndx * sizeof names, sizeof names);
    if (names.sh_offset > size || names.sh_size > size - names.sh_offset)
        return 0;
    for (int i = 0; i < header.e_shnum; i++) {
        memcpy(&section, sections + (size_t)i * sizeof section, sizeof section);
        if (section.sh_name >= names.sh_size)
            continue;
        const char *section_name = (const char *)data + names.sh_offset + section.sh_name;
        size_t room = names.sh_size - section.sh_name;
        if (strnlen(section_name, room) < room && strcmp(section_name, name) == 0) {
            *found = section;
            return 1;
        }
    }
    return 0;
}

int gx_host_fatbins(const void *data, size_t size, size_t offsets[GX_MAX_IMAGES], size_t sizes[GX_MAX_IMAGES],
                    int *count, gx_error *error)
{
    *count = 0;
    if (!is_elf64(data, size))
        return gx_fail(error, GX_ERR_USAGE, "not a 64-bit ELF file");
    const unsigned char *bytes = data;
    Elf64_Shdr found;
    const Elf64_Shdr *section = find_section(bytes, size, ".nv_fatbin", &found) ? &found : NULL;
    if (!section || section->sh_type == SHT_NOBITS) {
        if (find_section(bytes, size, "__nv_relfatbin", &found))
            return gx_fail(
                error, GX_ERR_USAGE,
                "its device code was compiled with -rdc=true and is not linked yet (section __nv_relfatbin): "
                "load the output of nvcc -dlink, or build with -rdc=false");
        return gx_fail(error, GX_ERR_USAGE,
                       "it holds no GPU code (no .nv_fatbin section; was it compiled with nvcc, and not stripped?)");
    }
    if (section->sh_offset > size || section->sh_size > size - section->sh_offset)
        return gx_fail(error, GX_ERR_USAGE, "its .nv_fatbin section lies outside the file (a truncated file?)");
    size_t start = section->sh_offset, end = start + section->sh_size;
    for (size_t at = start; at + 16 <= end;) {
        uint32_t magic;
        memcpy(&magic, bytes + at, 4);
        if (magic != FATBIN_MAGIC) { /* padding between the translation units' fat binaries */
            at += 8;
            continue;
        }
        uint16_t header_size;
        uint64_t fat_size;
        memcpy(&header_size, bytes + at + 6, 2);
        memcpy(&fat_size, bytes + at + 8, 8);
        /* header_size first: end - at - header_size would wrap past a header larger than what is left */
        if (header_size < 16 || header_size > end - at || fat_size > end - at - header_size)
            return gx_fail(error, GX_ERR_USAGE, "a fat binary in .nv_fatbin at offset %zu is cut short", at - start);
        if (*count == GX_MAX_IMAGES)
            return gx_fail(error, GX_ERR_USAGE, "more than %d fat binaries in .nv_fatbin", GX_MAX_IMAGES);
        offsets[*count] = at;
        sizes[(*count)++] = header_size + (size_t)fat_size;
        at += (header_size + (size_t)fat_size + 7) / 8 * 8;
    }
    if (*count == 0)
        return gx_fail(error, GX_ERR_USAGE, "its .nv_fatbin section holds no fat binary");
    return GX_OK;
}

/* The kernels of one cubin (ELF): FUNC symbols marked as entries (st_other bit 0x10, what the
   driver calls STO_CUDA_ENTRY), with their parameter sizes from the .nv.info.<symbol> section's
   EIATTR_KPARAM_INFO records (0x17: index, ordinal, offset, then the size in bits 18..31), which
   is what the driver reads for cuFuncGetParamInfo. Appended to list, without duplicates. */
enum { EIFMT_SVAL = 4, EIATTR_KPARAM_INFO = 0x17 };

static int add_kernel(gx_image_kernels *list, const char *symbol)
{
    for (int i = 0; i < list->count; i++)
        if (strcmp(list->kernels[i].symbol, symbol) == 0)
            return -1; /* already there (a fat binary holds one ELF per architecture) */
    if (list->count == list->capacity) {
        int capacity = list->capacity ? 2 * list->capacity : 64;
        gx_image_kernel *grown = realloc(list->kernels, sizeof *grown * (size_t)capacity);
        if (!grown)
            return -2;
        list->kernels = grown;
        list->capacity = capacity;
    }
    gx_image_kernel *k = &list->kernels[list->count];
    memset(k, 0, sizeof *k);
    k->symbol = strdup(symbol);
    if (!k->symbol)
        return -2;
    return list->count++;
}

static void read_param_info(const unsigned char *info, size_t size, gx_image_kernel *k)
{
    for (size_t at = 0; at + 4 <= size;) {
        unsigned format = info[at], attribute = info[at + 1];
        if (format == EIFMT_SVAL) {
            uint16_t length;
            memcpy(&length, info + at + 2, 2);
            if (at + 4 + length > size)
                return;
            if (attribute == EIATTR_KPARAM_INFO && length >= 12) {
                uint16_t ordinal;
                uint32_t word;
                memcpy(&ordinal, info + at + 8, 2);
                memcpy(&word, info + at + 12, 4);
                if (ordinal < GX_IMAGE_MAX_PARAMS) {
                    k->param_sizes[ordinal] = (int)((word >> 18) & 0x3fff);
                    if (ordinal + 1 > k->param_count)
                        k->param_count = ordinal + 1;
                }
            }
            at += 4 + (size_t)length;
        } else {
            at += 4; /* EIFMT_NVAL, EIFMT_HVAL: format, attribute and 2 bytes (unused or a value) */
        }
    }
}

static int cubin_kernels(const unsigned char *data, size_t size, gx_image_kernels *list, gx_error *error)
{
    if (!is_elf64(data, size))
        return gx_fail(error, GX_ERR_USAGE, "a cubin in it is not a 64-bit ELF file");
    /* headers and symbols are copied out: a file's offsets need not be aligned */
    Elf64_Ehdr header;
    memcpy(&header, data, sizeof header);
    Elf64_Shdr symtab_copy, strings_copy;
    const Elf64_Shdr *symtab = find_section(data, size, ".symtab", &symtab_copy) ? &symtab_copy : NULL;
    if (!symtab || symtab->sh_link >= header.e_shnum || symtab->sh_offset > size ||
        symtab->sh_size > size - symtab->sh_offset)
        return gx_fail(error, GX_ERR_USAGE, "a cubin in it has no readable symbol table");
    memcpy(&strings_copy, data + header.e_shoff + (size_t)symtab->sh_link * sizeof strings_copy, sizeof strings_copy);
    const Elf64_Shdr *strings = &strings_copy;
    if (strings->sh_offset > size || strings->sh_size > size - strings->sh_offset)
        return gx_fail(error, GX_ERR_USAGE, "a cubin in it has a damaged string table");
    size_t symbol_count = symtab->sh_size / sizeof(Elf64_Sym);
    for (size_t i = 0; i < symbol_count; i++) {
        Elf64_Sym symbol;
        memcpy(&symbol, data + symtab->sh_offset + i * sizeof symbol, sizeof symbol);
        const Elf64_Sym *s = &symbol;
        if (ELF64_ST_TYPE(s->st_info) != STT_FUNC || !(s->st_other & 0x10) || s->st_name >= strings->sh_size)
            continue;
        const char *name = (const char *)data + strings->sh_offset + s->st_name;
        if (strnlen(name, strings->sh_size - s->st_name) == strings->sh_size - s->st_name)
            continue;
        int index = add_kernel(list, name);
        if (index == -2)
            return gx_fail(error, GX_ERR_SYSTEM, "out of memory");
        if (index < 0)
            continue;
        char section_name[1100];
        snprintf(section_name, sizeof section_name, ".nv.info.%s", name);
        Elf64_Shdr info_copy;
        const Elf64_Shdr *info = find_section(data, size, section_name, &info_copy) ? &info_copy : NULL;
        if (info && info->sh_offset <= size && info->sh_size <= size - info->sh_offset)
            read_param_info(data + info->sh_offset, info->sh_size, &list->kernels[index]);
    }
    return GX_OK;
}

/* A fat binary: a 16-byte header (magic, version, header size, size of what follows), then entries
   of a header (kind 1 PTX or 2 ELF, header size, payload size, flags at 0x30; bit 0x2000 is a
   compressed payload) and their payload. */
typedef int (*cubin_reader)(const unsigned char *data, size_t size, void *list, gx_error *error);

static int fatbin_cubins(const unsigned char *data, size_t size, cubin_reader read, void *list, int *compressed,
                         gx_error *error)
{
    uint16_t header_size;
    uint64_t fat_size;
    if (size < 16) /* found by tests/fuzz: a file of the magic and a few bytes was read past */
        return gx_fail(error, GX_ERR_USAGE, "a fat binary in it is cut short");
    memcpy(&header_size, data + 6, 2);
    memcpy(&fat_size, data + 8, 8);
    if (header_size < 16 || header_size > size || fat_size > size - header_size)
        return gx_fail(error, GX_ERR_USAGE, "a fat binary in it is cut short");
    size_t end = header_size + (size_t)fat_size;
    for (size_t at = header_size; at + 0x40 <= end;) {
        uint16_t kind;
        uint32_t entry_header;
        uint64_t payload, flags;
        memcpy(&kind, data + at, 2);
        memcpy(&entry_header, data + at + 4, 4);
        memcpy(&payload, data + at + 8, 8);
        memcpy(&flags, data + at + 0x30, 8);
        if (entry_header < 0x40 || entry_header > end - at || payload > end - at - entry_header)
            return gx_fail(error, GX_ERR_USAGE, "an entry of a fat binary in it is cut short");
        const unsigned char *body = data + at + entry_header;
        if (flags & 0x2000)
            (*compressed)++;
        else if (kind == 2 && read(body, (size_t)payload, list, error))
            return error->kind;
        at += entry_header + (size_t)payload;
    }
    return GX_OK;
}

/* Every cubin of a cubin, fat binary or host binary, read by `read`; *compressed counts the
   entries that could not be read. */
static int each_cubin(const void *data, size_t size, cubin_reader read, void *list, int *compressed, gx_error *error)
{
    gx_image_kind kind = gx_image_detect(data, size);
    if (kind == GX_IMAGE_CUBIN)
        return read(data, size, list, error);
    if (kind == GX_IMAGE_FATBIN)
        return fatbin_cubins(data, size, read, list, compressed, error);
    if (kind != GX_IMAGE_HOST_ELF)
        return gx_fail(error, GX_ERR_USAGE, "not a cubin, fat binary or host binary");
    size_t offsets[GX_MAX_IMAGES], sizes[GX_MAX_IMAGES];
    int count = 0;
    int status = gx_host_fatbins(data, size, offsets, sizes, &count, error);
    for (int i = 0; status == GX_OK && i < count; i++)
        status = fatbin_cubins((const unsigned char *)data + offsets[i], sizes[i], read, list, compressed, error);
    return status;
}

static int read_kernels(const unsigned char *data, size_t size, void *list, gx_error *error)
{
    return cubin_kernels(data, size, list, error);
}

int gx_image_list_kernels(const void *data, size_t size, gx_image_kernels *list, gx_error *error)
{
    memset(list, 0, sizeof *list);
    int compressed = 0;
    int status = each_cubin(data, size, read_kernels, list, &compressed, error);
    if (status == GX_OK && list->count == 0 && compressed)
        status = gx_fail(error, GX_ERR_USAGE,
                         "its device code is compressed (nvcc's default for large builds), which "
                         "only the driver can read: build with -Xfatbin=-compress-all=false, or run on a GPU");
    if (status)
        gx_image_kernels_free(list);
    return status;
}

void gx_image_kernels_free(gx_image_kernels *list)
{
    for (int i = 0; i < list->count; i++)
        free(list->kernels[i].symbol);
    free(list->kernels);
    memset(list, 0, sizeof *list);
}

/* A cubin's module globals: OBJECT symbols in the sections of __constant__ (.nv.constant3, or the
   bank a compiler picks: any .nv.constantN but the parameters' .nv.constant0) and __device__
   variables (.nv.global, .nv.global.init). */
static int cubin_globals(const unsigned char *data, size_t size, void *user, gx_error *error)
{
    gx_image_globals *list = user;
    if (!is_elf64(data, size))
        return gx_fail(error, GX_ERR_USAGE, "a cubin in it is not a 64-bit ELF file");
    Elf64_Ehdr header;
    memcpy(&header, data, sizeof header);
    Elf64_Shdr symtab, strings, names;
    if (!find_section(data, size, ".symtab", &symtab) || symtab.sh_link >= header.e_shnum || symtab.sh_offset > size ||
        symtab.sh_size > size - symtab.sh_offset)
        return gx_fail(error, GX_ERR_USAGE, "a cubin in it has no readable symbol table");
    memcpy(&strings, data + header.e_shoff + (size_t)symtab.sh_link * sizeof strings, sizeof strings);
    memcpy(&names, data + header.e_shoff + (size_t)header.e_shstrndx * sizeof names, sizeof names);
    if (strings.sh_offset > size || strings.sh_size > size - strings.sh_offset || names.sh_offset > size ||
        names.sh_size > size - names.sh_offset)
        return gx_fail(error, GX_ERR_USAGE, "a cubin in it has a damaged string table");
    for (size_t i = 0; i < symtab.sh_size / sizeof(Elf64_Sym); i++) {
        Elf64_Sym symbol;
        memcpy(&symbol, data + symtab.sh_offset + i * sizeof symbol, sizeof symbol);
        if (ELF64_ST_TYPE(symbol.st_info) != STT_OBJECT || symbol.st_shndx == SHN_UNDEF ||
            symbol.st_shndx >= header.e_shnum || symbol.st_name >= strings.sh_size)
            continue;
        Elf64_Shdr section;
        memcpy(&section, data + header.e_shoff + (size_t)symbol.st_shndx * sizeof section, sizeof section);
        if (section.sh_name >= names.sh_size)
            continue;
        const char *section_name = (const char *)data + names.sh_offset + section.sh_name;
        size_t room = names.sh_size - section.sh_name;
        if (strnlen(section_name, room) == room)
            continue;
        int constant =
            strncmp(section_name, ".nv.constant", 12) == 0 && strncmp(section_name, ".nv.constant0", 13) != 0;
        if (!constant && strncmp(section_name, ".nv.global", 10) != 0)
            continue;
        const char *name = (const char *)data + strings.sh_offset + symbol.st_name;
        if (strnlen(name, strings.sh_size - symbol.st_name) == strings.sh_size - symbol.st_name || !name[0])
            continue;
        int known = 0;
        for (int j = 0; j < list->count && !known; j++)
            known = strcmp(list->globals[j].symbol, name) == 0;
        if (known)
            continue; /* one ELF per architecture in a fat binary */
        if (list->count == list->capacity) {
            int capacity = list->capacity ? 2 * list->capacity : 32;
            gx_image_global *grown = realloc(list->globals, sizeof *grown * (size_t)capacity);
            if (!grown)
                return gx_fail(error, GX_ERR_SYSTEM, "out of memory");
            list->globals = grown;
            list->capacity = capacity;
        }
        gx_image_global *g = &list->globals[list->count];
        if (!(g->symbol = strdup(name)))
            return gx_fail(error, GX_ERR_SYSTEM, "out of memory");
        g->bytes = (size_t)symbol.st_size;
        g->constant = constant;
        list->count++;
    }
    return GX_OK;
}

int gx_image_list_globals(const void *data, size_t size, gx_image_globals *list, gx_error *error)
{
    memset(list, 0, sizeof *list);
    int compressed = 0;
    int status = each_cubin(data, size, cubin_globals, list, &compressed, error);
    if (status)
        gx_image_globals_free(list);
    return status;
}

void gx_image_globals_free(gx_image_globals *list)
{
    for (int i = 0; i < list->count; i++)
        free(list->globals[i].symbol);
    free(list->globals);
    memset(list, 0, sizeof *list);
}
