/* The line profile's pure parts (gx_lines.c), no GPU and no CUPTI: the index of instructions by
   (function, pc) through growth, and the size of a function's code in a cubin's ELF, on a cubin
   built here and on damaged ones (never read past the bytes given). */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gx_lines.h"

#include "check.h"

static void instruction_index(void)
{
    gx_line_profile p;
    memset(&p, 0, sizeof p);
    const char *functions[] = {"kernel_a", "kernel_b", "_Z6helperPf"};
    for (int round = 0; round < 2; round++) /* the second round finds every one again */
        for (int f = 0; f < 3; f++)
            for (uint64_t pc = 0; pc < 16 * 5000; pc += 16) {
                gx_line_instruction *i = gx_line_profile_instruction(&p, functions[f], pc);
                CHECK(i && i->pc == pc && strcmp(i->function, functions[f]) == 0);
                i->values[0] += pc + 1;
            }
    CHECK(p.count == 3 * 5000);
    size_t doubled = 0;
    for (size_t k = 0; k < p.count; k++)
        doubled += p.instructions[k].values[0] == 2 * (p.instructions[k].pc + 1);
    CHECK(doubled == p.count);
    CHECK(gx_line_profile_instruction(&p, NULL, 16) && p.count == 3 * 5000 + 1); /* no name: "" */
    gx_line_profile_free(&p);
    CHECK(p.count == 0 && p.instructions == NULL);
    gx_line_profile_free(&p); /* twice: nothing */
}

/* A minimal ELF64 with sections: null, .shstrtab, .text.<name> of `code` bytes. */
static unsigned char *tiny_cubin(const char *name, size_t code, size_t *size)
{
    char strings[256];
    size_t n = 0;
    strings[n++] = 0;
    size_t shstrtab_name = n;
    n += (size_t)sprintf(strings + n, ".shstrtab") + 1;
    size_t text_name = n;
    n += (size_t)sprintf(strings + n, ".text.%s", name) + 1;
    size_t strings_at = sizeof(Elf64_Ehdr), code_at = strings_at + n, headers_at = code_at + code;
    *size = headers_at + 3 * sizeof(Elf64_Shdr);
    unsigned char *data = calloc(1, *size);
    Elf64_Ehdr *h = (Elf64_Ehdr *)data;
    memcpy(h->e_ident, ELFMAG, SELFMAG);
    h->e_ident[EI_CLASS] = ELFCLASS64;
    h->e_shoff = headers_at;
    h->e_shentsize = sizeof(Elf64_Shdr);
    h->e_shnum = 3;
    h->e_shstrndx = 1;
    memcpy(data + strings_at, strings, n);
    Elf64_Shdr sections[3];
    memset(sections, 0, sizeof sections);
    sections[1].sh_name = (Elf64_Word)shstrtab_name;
    sections[1].sh_type = SHT_STRTAB;
    sections[1].sh_offset = strings_at;
    sections[1].sh_size = n;
    sections[2].sh_name = (Elf64_Word)text_name;
    sections[2].sh_type = SHT_PROGBITS;
    sections[2].sh_offset = code_at;
    sections[2].sh_size = code;
    memcpy(data + headers_at, sections, sizeof sections);
    return data;
}

static void function_bytes(void)
{
    size_t size;
    unsigned char *cubin = tiny_cubin("my_kernel", 320, &size);
    CHECK(gx_cubin_function_bytes(cubin, size, "my_kernel") == 320);
    CHECK(gx_cubin_function_bytes(cubin, size, "my_kerne") == 0); /* a prefix is another name */
    CHECK(gx_cubin_function_bytes(cubin, size, "other") == 0);
    CHECK(gx_cubin_function_bytes(cubin, size, NULL) == 0);
    /* damaged: cut anywhere, a wrong class, section headers or names pointing outside */
    for (size_t cut = 0; cut < size; cut += 7)
        (void)gx_cubin_function_bytes(cubin, cut, "my_kernel"); /* no crash, no read past the cut */
    CHECK(gx_cubin_function_bytes(cubin, sizeof(Elf64_Ehdr) - 1, "my_kernel") == 0);
    Elf64_Ehdr *h = (Elf64_Ehdr *)cubin;
    h->e_shoff = size - 8;
    CHECK(gx_cubin_function_bytes(cubin, size, "my_kernel") == 0);
    free(cubin);
    cubin = tiny_cubin("my_kernel", 320, &size);
    h = (Elf64_Ehdr *)cubin;
    h->e_shstrndx = 7;
    CHECK(gx_cubin_function_bytes(cubin, size, "my_kernel") == 0);
    free(cubin);
    cubin = tiny_cubin("my_kernel", 320, &size);
    Elf64_Shdr *sections = (Elf64_Shdr *)(cubin + ((Elf64_Ehdr *)cubin)->e_shoff);
    sections[1].sh_size = size * 4; /* the names past the end */
    CHECK(gx_cubin_function_bytes(cubin, size, "my_kernel") == 0);
    sections[1].sh_size = 10;
    sections[2].sh_name = 9; /* a name that is cut by its table's end */
    CHECK(gx_cubin_function_bytes(cubin, size, "my_kernel") == 0);
    cubin[EI_CLASS] = ELFCLASS32;
    CHECK(gx_cubin_function_bytes(cubin, size, "my_kernel") == 0);
    free(cubin);
    CHECK(gx_cubin_function_bytes("not an elf at all, just text", 28, "x") == 0);
}

int main(void)
{
    instruction_index();
    function_bytes();
    printf("%d checks, %d failed\n", checks, failures);
    return failures ? 1 : 0;
}
