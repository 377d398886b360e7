/* The recording header's share settings (issue 35): share_label, share_top_n and
 * attribute_by, so a replay derives the same shares with no config. A header
 * without them (older files) keeps the defaults; a bad value is ignored. */
#include "core/recfmt.h"

#include <ctype.h>
#include <math.h>
#include <string.h>

#include "core/util.h"

void bt_rec_header_shares(cJSON *c, const struct bt_config *cfg)
{
    cJSON_AddStringToObject(c, "share_label", cfg->share_label);
    cJSON_AddNumberToObject(c, "share_top_n", cfg->share_top_n);
    if (cfg->attribute_tag[0])
        cJSON_AddStringToObject(c, "attribute_tag", cfg->attribute_tag);
}

static bool printable(const char *s, size_t max)
{
    size_t n = strlen(s);
    for (const char *p = s; *p; p++)
        if (!isprint((unsigned char)*p))
            return false;
    return n > 0 && n < max;
}

void bt_rec_read_shares(const cJSON *c, struct bt_config *cfg)
{
    const cJSON *l = cJSON_GetObjectItemCaseSensitive(c, "share_label");
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(c, "share_top_n");
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(c, "attribute_tag");
    if (cJSON_IsString(l) && printable(l->valuestring, sizeof cfg->share_label))
        bt_strlcpy(cfg->share_label, l->valuestring, sizeof cfg->share_label);
    if (cJSON_IsNumber(n) && n->valuedouble >= 1 && n->valuedouble <= 1000)
        cfg->share_top_n = (int)n->valuedouble;
    if (cJSON_IsString(t) && printable(t->valuestring, sizeof cfg->attribute_tag))
        bt_strlcpy(cfg->attribute_tag, t->valuestring, sizeof cfg->attribute_tag);
}
