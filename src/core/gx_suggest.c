/* "Did you mean": edit distance and the closest candidates (see gx_suggest.h). */
#include <stdio.h>
#include <string.h>

#include "gx_cxxname.h" /* gx_edit_distance, the one edit distance */
#include "gx_suggest.h"

int gx_suggest(const char *target, const char *const *candidates, size_t count, int want, int close_only, int *chosen)
{
    size_t scores[16];
    int have = 0;
    if (want > 16)
        want = 16;
    size_t target_length = strlen(target);
    for (size_t i = 0; i < count; i++) {
        size_t score = (size_t)gx_edit_distance(target, candidates[i]);
        int contains = target_length >= 3 && strlen(candidates[i]) >= 3 &&
                       (strstr(candidates[i], target) || strstr(target, candidates[i]));
        if (close_only) {
            size_t longer = strlen(candidates[i]) > target_length ? strlen(candidates[i]) : target_length;
            size_t limit = longer / 3 > 1 ? longer / 3 : 1;
            if (score > limit && !contains)
                continue;
        }
        if (contains)
            score = score / 2; /* substrings are likely what was meant */
        int at = have;
        while (at > 0 && scores[at - 1] > score)
            at--;
        if (at >= want)
            continue;
        for (int k = (have < want ? have : want - 1); k > at; k--) {
            chosen[k] = chosen[k - 1];
            scores[k] = scores[k - 1];
        }
        chosen[at] = (int)i;
        scores[at] = score;
        if (have < want)
            have++;
    }
    return have;
}

void gx_did_you_mean(const char *target, const char *const *candidates, size_t count, char *out, size_t size)
{
    int chosen[3];
    int have = gx_suggest(target, candidates, count, 3, 1, chosen);
    size_t used = 0;
    if (size)
        out[0] = 0;
    for (int k = 0; k < have && used < size; k++)
        used += (size_t)snprintf(out + used, size - used, "%s%s",
                                 k == 0          ? " (did you mean '"
                                 : k == have - 1 ? "' or '"
                                                 : "', '",
                                 candidates[chosen[k]]);
    if (have && used < size)
        snprintf(out + used, size - used, "'?)");
}
