#include "gx_binary.h"

#include <elf.h>
#include <stdint.h>
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
    if (header.e_shoff == 0 || header.e_shentsize != sizeof(Elf64_Shdr) || header.e_shoff > size
        || (size - header.e_shoff) / sizeof(Elf64_Shdr) < header.e_shnum || header.e_shstrndx >= header.e_shnum)
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
            return gx_fail(error, GX_ERR_USAGE,
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
