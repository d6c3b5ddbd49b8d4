/* `gpuexp metrics`: the metrics a GPU or chip offers, and checks of metric names (no launch). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gx_cli.h"
#include "l_gpuexp.h"
#include "gx_metric.h"
#include "gx_profiler.h"

static const char usage[] = "(gpuexp metrics --help)\n";

static void print_metric(void *user, const char *name, int type)
{
    static const char *const types[] = {"counter", "ratio", "throughput"};
    (void)user;
    printf("%s,%s\n", name, type >= 0 && type < 3 ? types[type] : "unknown");
}

/* What the command line asks for. */
struct metrics_request {
    const char *chip;
    int device_ordinal, list, check, chips;
    const char *names[256];
    int name_count;
};

/* Reads the command line into r: -1 to go on, else the exit code (--help, a usage error). */
static int read_line(int argc, char **argv, struct metrics_request *r)
{
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            gx_cli_help("metrics", stdout);
            return GX_EXIT_OK;
        } else if (strcmp(argv[i], "--list") == 0) {
            r->list = 1;
        } else if (strcmp(argv[i], "--chips") == 0) {
            r->chips = 1;
        } else if (strcmp(argv[i], "--check") == 0) {
            r->check = 1;
        } else if (strcmp(argv[i], "--chip") == 0 && i + 1 < argc) {
            r->chip = argv[++i];
        } else if (strcmp(argv[i], "--device") == 0 && i + 1 < argc) {
            char *end;
            long ordinal = strtol(argv[++i], &end, 10);
            if (end == argv[i] || *end || ordinal < 0 || ordinal > 1024) {
                fprintf(stderr, "gpuexp metrics: --device takes a GPU number, got '%s'\n%s", argv[i], usage);
                return GX_EXIT_USAGE;
            }
            r->device_ordinal = (int)ordinal;
        } else if (r->check && argv[i][0] != '-' && r->name_count < 256) {
            r->names[r->name_count++] = argv[i];
        } else {
            char hint[256];
            gx_cli_did_you_mean("metrics", argv[i], hint, sizeof hint);
            fprintf(stderr, "gpuexp metrics: unknown argument '%s'%s\n%s", argv[i], hint, usage);
            return GX_EXIT_USAGE;
        }
    }
    if (r->list + r->check + r->chips != 1 || (r->check && r->name_count == 0)) {
        fprintf(stderr, "gpuexp metrics: give one of --list, --check NAME..., --chips\n%s", usage);
        return GX_EXIT_USAGE;
    }
    return -1;
}

/* The names checked: a preset's names (gpuexp help --presets) as the preset collects them (the
   names this chip lacks left out, as kernel:metrics leaves them out), other names as given. */
static int expand_presets(gx_metric_host *host, const char **names, int name_count)
{
    enum { SLOT = 160, MAX = 256 };
    static char expanded[MAX][SLOT];
    const char *checked[MAX];
    int checked_count = 0, preset_names = 0;
    gx_error error;
    for (int i = 0; i < name_count && checked_count < MAX; i++) {
        int n = l_metric_preset(names[i], &expanded[preset_names][0], SLOT, MAX - preset_names);
        if (n <= 0) {
            checked[checked_count++] = names[i];
            continue;
        }
        for (int k = 0; k < n && checked_count < MAX; k++) {
            const char *metric = expanded[preset_names + k];
            if (gx_metric_check(host, metric, NULL, &error) == GX_OK)
                checked[checked_count++] = metric;
            else
                fprintf(stderr, "gpuexp metrics: preset %s: %s is not on %s (left out, as the preset does)\n",
                        names[i], metric, gx_metric_host_chip(host));
        }
        preset_names += n;
    }
    for (int i = 0; i < checked_count; i++)
        names[i] = checked[i];
    return checked_count;
}

/* --check: each name's type, unit and description, and the replay passes of them all. */
static int check_names(gx_metric_host *host, const char **names, int name_count)
{
    int status = GX_EXIT_OK;
    gx_error error;
    name_count = expand_presets(host, names, name_count);
    printf("name,type,unit,description\n");
    for (int i = 0; i < name_count; i++) {
        gx_metric_info info;
        if (gx_metric_check(host, names[i], &info, &error)) {
            fprintf(stderr, "gpuexp metrics: %s\n", error.message);
            status = GX_EXIT_SCRIPT; /* catalog: 1, a metric checked is not valid */
            continue;
        }
        static const char *const types[] = {"counter", "ratio", "throughput"};
        printf("%s,%s,%s,\"%s\"\n", names[i], info.type >= 0 && info.type < 3 ? types[info.type] : "unknown",
               info.dimension_unit ? info.dimension_unit : "", info.description ? info.description : "");
    }
    size_t passes;
    if (status == GX_EXIT_OK && gx_metric_passes(host, names, name_count, &passes, &error) == GX_OK)
        fprintf(stderr, "%d metric(s) on %s: %zu replay pass(es)\n", name_count, gx_metric_host_chip(host), passes);
    return status;
}

int gx_cli_metrics(int argc, char **argv)
{
    static struct metrics_request r;
    int code = read_line(argc, argv, &r);
    if (code >= 0)
        return code;
    gx_error error;
    if (r.chips) {
        char text[4096];
        if (gx_metric_chips(text, sizeof text, &error)) {
            fprintf(stderr, "gpuexp metrics: %s\n", error.message);
            return GX_EXIT_GPU;
        }
        printf("%s\n", text);
        return GX_EXIT_OK;
    }
    gx_metric_host *host = NULL;
    gx_profiler *profiler = NULL;
    gx_device device;
    if (r.chip) {
        if (gx_metric_host_open(&host, r.chip, &error)) {
            fprintf(stderr, "gpuexp metrics: %s\n", error.message);
            return error.kind == GX_ERR_USAGE ? GX_EXIT_USAGE : GX_EXIT_GPU;
        }
    } else {
        if (gx_device_open(&device, r.device_ordinal, &error) || gx_profiler_open(&profiler, &device, &error)) {
            fprintf(stderr, "gpuexp metrics: %s\n", error.message);
            return GX_EXIT_GPU;
        }
        host = gx_profiler_host(profiler);
    }
    int status = GX_EXIT_OK;
    if (r.list) {
        printf("name,type\n");
        if (gx_metric_each(host, print_metric, NULL, &error)) {
            fprintf(stderr, "gpuexp metrics: %s\n", error.message);
            status = GX_EXIT_GPU;
        }
    } else {
        status = check_names(host, r.names, r.name_count);
    }
    if (profiler)
        gx_profiler_close(profiler);
    else
        gx_metric_host_close(host);
    return status;
}
