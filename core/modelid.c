/* Model IDs as callers pass them: the inference-profile prefix and the inference route
 * it implies. A leaf of core: the burndown table, the quota names and the store all read
 * it, and it reads nothing of theirs. */
#include <string.h>

#include "core/model.h"

/* A geographic or global inference-profile prefix, recognised by its shape (never a
 * fixed list: AWS keeps adding Region groups, and an unknown prefix read as an
 * on-demand model ID put a cross-Region route on the wrong quota at burndown 1):
 * "global.", or a short lower-case segment of two to four letters with an optional
 * "-letters" tail ("us.", "in.", "apac.", "us-gov.") followed by vendor.model, the
 * vendor lower-case letters and digits ("anthropic.", "openai."). So "zai.glm-4.6"
 * (the "vendor" has a '-') and "meta.llama3-70b" (no second dot) have none.
 * ListInferenceProfiles confirms them per Region (collectors/infprofile.c). */
static size_t letters(const char *p, const char *set)
{
    return strspn(p, set);
}

size_t bt_profile_prefix_len(const char *id)
{
    static const char lower[] = "abcdefghijklmnopqrstuvwxyz";
    static const char alnum[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    if (!id)
        return 0;
    size_t l;
    if (!strncmp(id, "global.", 7)) {
        l = 7;
    } else {
        l = letters(id, lower);
        if (l < 2 || l > 4)
            return 0;
        if (id[l] == '-') {
            size_t t = letters(id + l + 1, lower);
            if (!t)
                return 0;
            l += 1 + t;
        }
        if (id[l] != '.')
            return 0;
        l++;
    }
    size_t v = letters(id + l, alnum);
    if (!v || id[l + v] != '.' || !id[l + v + 1] || !strchr(lower, id[l]))
        return 0;
    return l;
}

const char *bt_profile_strip(const char *id)
{
    return id + bt_profile_prefix_len(id);
}

enum bt_inference bt_inference_from_model(const char *id)
{
    static const char lo[] = "+latency-optimized";
    size_t n = strlen(id);
    if (strncmp(id, "arn:", 4) == 0 && strstr(id, ":provisioned-model/"))
        return BT_INF_PROVISIONED;
    if (n > sizeof lo - 1 && strcmp(id + n - (sizeof lo - 1), lo) == 0)
        return BT_INF_LATENCY_OPTIMIZED;
    if (strncmp(id, "global.", 7) == 0)
        return BT_INF_GLOBAL;
    return bt_profile_prefix_len(id) ? BT_INF_CROSS_REGION : BT_INF_ON_DEMAND;
}
