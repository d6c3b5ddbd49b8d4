/* The line profile's pure parts (gx_lines.c), no GPU and no CUPTI: the index of instructions by
   (function, pc) through growth, the size of a function's code and whether there is a line table in
   a cubin's ELF, on cubins built here and on damaged ones (never read past the bytes given), and the
   process rule between PC sampling and SASS metrics, driven with fake collectors that fail as the
   H100's did when run after the other (bench/h100/lines_try1/probe.txt). */
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

/* A minimal ELF64 with sections: null, .shstrtab, `section` of `code` bytes. */
static unsigned char *tiny_elf(const char *section, size_t code, size_t *size)
{
    char strings[256];
    size_t n = 0;
    strings[n++] = 0;
    size_t shstrtab_name = n;
    n += (size_t)sprintf(strings + n, ".shstrtab") + 1;
    size_t text_name = n;
    n += (size_t)sprintf(strings + n, "%s", section) + 1;
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

/* A minimal cubin: the code of function `name` (.text.<name>), `code` bytes. */
static unsigned char *tiny_cubin(const char *name, size_t code, size_t *size)
{
    char section[200];
    snprintf(section, sizeof section, ".text.%s", name);
    return tiny_elf(section, code, size);
}

static void line_table(void)
{
    size_t size;
    unsigned char *elf = tiny_elf(".debug_line", 64, &size);
    CHECK(gx_cubin_has_line_table(elf, size) == 1);
    for (size_t cut = 0; cut < size; cut += 5)
        CHECK(gx_cubin_has_line_table(elf, cut) == 0); /* cut: no read past the bytes given */
    free(elf);
    elf = tiny_elf(".debug_line", 0, &size); /* an empty table is none */
    CHECK(gx_cubin_has_line_table(elf, size) == 0);
    free(elf);
    elf = tiny_elf(".debug_lines", 64, &size); /* another name */
    CHECK(gx_cubin_has_line_table(elf, size) == 0);
    free(elf);
    elf = tiny_cubin("kernel", 64, &size);
    CHECK(gx_cubin_has_line_table(elf, size) == 0);
    free(elf);
    CHECK(gx_cubin_has_line_table(NULL, 0) == 0);
    CHECK(gx_cubin_has_line_table("not an elf", 10) == 0);
}

/* ---- the process rule, with fake collectors ---- */

/* A process as the H100's driver behaved: PC sampling after SASS metrics gives no samples, SASS
   metrics after PC sampling fail. Each fake returns 1 when it gave its data. */
struct fake_process {
    int owner; /* as gx_lines.c keeps it: the first collector enabled here */
    int pc_ran, sass_ran;
    int pc_profiles, sass_profiles, broken;
};

static int fake_pc(struct fake_process *f)
{
    int works = !f->sass_ran;
    f->pc_ran = 1;
    return works;
}

static int fake_sass(struct fake_process *f)
{
    int works = !f->pc_ran;
    f->sass_ran = 1;
    return works;
}

/* A collector run in the fake process: it owns the process when the first; its profile counted,
   or the process counted broken. */
static void run_fake(struct fake_process *f, int collector, int (*stage)(struct fake_process *), int *profiles)
{
    if (!f->owner)
        f->owner = collector;
    if (stage(f))
        (*profiles)++;
    else
        f->broken++;
}

/* One line profile request in the fake process, run as gx_line_profile_collect runs it. */
static void request(struct fake_process *f, int want_pc, int want_sass, gx_lines_plan *plan)
{
    gx_lines_plan_for(f->owner, want_pc, want_sass, plan);
    CHECK(!(plan->run_pc && plan->run_sass)); /* never both in one request */
    if (plan->run_pc)
        run_fake(f, GX_LINES_PC, fake_pc, &f->pc_profiles);
    if (plan->run_sass)
        run_fake(f, GX_LINES_SASS, fake_sass, &f->sass_profiles);
    /* a collector asked for and not run says why, naming what to do; one run says nothing */
    CHECK(want_pc && !plan->run_pc ? strstr(plan->why_pc, "process of their own") != NULL : plan->why_pc[0] == 0);
    CHECK(want_sass && !plan->run_sass ? strstr(plan->why_sass, "pc_sampling = false") != NULL
                                       : plan->why_sass[0] == 0);
}

static void process_rule(void)
{
    gx_lines_plan plan;
    /* every order of requests a script can make, three in a process: no collector is ever broken */
    for (int sequence = 0; sequence < 27; sequence++) {
        struct fake_process f = {0};
        for (int k = 0, code = sequence; k < 3; k++, code /= 3) {
            int kind = code % 3; /* 0: PC only (the default), 1: SASS only, 2: both asked */
            request(&f, kind != 1, kind != 0, &plan);
        }
        CHECK(f.broken == 0);
        CHECK(f.pc_profiles == 0 || f.sass_profiles == 0); /* one collector a process */
    }
    /* a fresh process: PC sampling first when both are asked, SASS refused and said */
    struct fake_process f = {0};
    request(&f, 1, 1, &plan);
    CHECK(plan.run_pc && !plan.run_sass && f.pc_profiles == 1);
    request(&f, 1, 0, &plan); /* PC sampling again: it owns the process */
    CHECK(plan.run_pc && f.pc_profiles == 2);
    request(&f, 0, 1, &plan);
    CHECK(!plan.run_sass && f.sass_profiles == 0);
    /* a process that counted SASS metrics first keeps them, and refuses PC sampling */
    struct fake_process g = {0};
    request(&g, 0, 1, &plan);
    CHECK(plan.run_sass && g.sass_profiles == 1);
    request(&g, 1, 0, &plan);
    CHECK(!plan.run_pc && g.pc_profiles == 0 && g.broken == 0);
    request(&g, 0, 1, &plan);
    CHECK(plan.run_sass && g.sass_profiles == 2);
    /* nothing asked: nothing run, nothing said */
    gx_lines_plan_for(0, 0, 0, &plan);
    CHECK(!plan.run_pc && !plan.run_sass && !plan.why_pc[0] && !plan.why_sass[0]);
    CHECK(gx_lines_owner() == 0); /* no CUPTI here: this process owns nothing */
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
    /* the section headers edited through copies: a cubin's bytes need not be aligned */
    Elf64_Ehdr header;
    memcpy(&header, cubin, sizeof header);
    Elf64_Shdr sections[3];
    memcpy(sections, cubin + header.e_shoff, sizeof sections);
    sections[1].sh_size = size * 4; /* the names past the end */
    memcpy(cubin + header.e_shoff, sections, sizeof sections);
    CHECK(gx_cubin_function_bytes(cubin, size, "my_kernel") == 0);
    sections[1].sh_size = 10;
    sections[2].sh_name = 9; /* a name that is cut by its table's end */
    memcpy(cubin + header.e_shoff, sections, sizeof sections);
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
    line_table();
    process_rule();
    printf("%d checks, %d failed\n", checks, failures);
    return failures ? 1 : 0;
}
