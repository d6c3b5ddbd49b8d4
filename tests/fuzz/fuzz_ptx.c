/* libFuzzer target: the PTX parameter parser and the ptxas report parser (src/core/gx_ptx.c) on any
   text, as PTX from another compiler or a damaged cache entry gives them. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gx_ptx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = 0;
    /* the entry asked for: the first word of the input, so the fuzzer can reach a match */
    char name[64] = "k";
    const char *entry = strstr(text, ".entry ");
    if (entry) {
        size_t n = strcspn(entry + 7, " (\n");
        if (n > 0 && n < sizeof name) {
            memcpy(name, entry + 7, n);
            name[n] = 0;
        }
    }
    gx_param params[64];
    int count = gx_ptx_params(text, name, params, 64);
    if (count > 64)
        abort();
    for (int i = 0; i < count && i < 64; i++)
        if (params[i].size_bytes < 0 || memchr(params[i].ptx_type, 0, sizeof params[i].ptx_type) == NULL)
            abort();
    char entries[256];
    gx_ptx_entries(text, entries, sizeof entries);
    if (memchr(entries, 0, sizeof entries) == NULL)
        abort();
    gx_resources resources[16];
    int found = gx_ptxas_parse(text, resources, 16);
    if (found > 16)
        abort();
    gx_ptxas_find(text, name, resources);
    free(text);
    return 0;
}
