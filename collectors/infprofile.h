/* Application inference profiles: a route whose model is
 * arn:aws:bedrock:REGION:ACCOUNT:application-inference-profile/ID draws from the
 * quota of the model the profile routes to. The Bedrock control-plane call
 * GetInferenceProfile (REST-JSON, GET /inference-profiles/{id}, SigV4 service
 * "bedrock") lists the model ARNs; these pure parts build the request path and
 * read the answer. The quotas collector sends it (collectors/quota_collect.c). */
#ifndef BEDTOP_INFPROFILE_H
#define BEDTOP_INFPROFILE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/model.h"

#define BT_INFPROFILE_REFRESH (6 * 3600)  /* a profile's models rarely change */

/* Is this model ID an application inference profile ARN? */
bool bt_infprofile_is_arn(const char *model_id);
/* The Region field of such an ARN ("" when absent). */
void bt_infprofile_arn_region(const char *arn, char *out, size_t n);
/* "/inference-profiles/" + the ARN percent-encoded (':' and '/' included). */
void bt_infprofile_path(const char *arn, char *out, size_t n);
/* RFC 3986 percent-encoding of everything but the unreserved characters (a path
 * segment or a query value). */
void bt_infprofile_encode(const char *text, char *out, size_t n);

struct bt_infprofile {
    char base_model[192];    /* foundation-model ID, e.g. anthropic.claude-sonnet-4-5-20250929-v1:0 */
    enum bt_inference inference; /* several Regions: cross-region; one: on-demand */
    int nregions;
    char status[32];         /* ACTIVE */
    char type[32];           /* APPLICATION | SYSTEM_DEFINED */
};
/* Reads a GetInferenceProfile answer. False (err set) when it is malformed, lists no
 * model, or routes to more than one model. */
bool bt_infprofile_parse(const char *body, size_t len, struct bt_infprofile *out, char *err,
                         size_t errlen);

/* Answers kept between runs (so that `bedtop check` from cron does not ask every
 * minute): $XDG_CACHE_HOME/bedtop/inference-profiles.json (default ~/.cache/...),
 * mode 0600. get: true with *out and *at when arn was resolved less than
 * BT_INFPROFILE_REFRESH before now. put: records an answer, dropping stale ones.
 * Failures to read or write are silent: the call is then simply made. */
bool bt_infprofile_cache_get(const char *arn, int64_t now, struct bt_infprofile *out,
                             int64_t *at);
void bt_infprofile_cache_put(const char *arn, const struct bt_infprofile *ip, int64_t at);
/* A ListInferenceProfiles page ({"inferenceProfileSummaries": [{"inferenceProfileId":
 * ...}], "nextToken"}): fn for every profile ID; *next_token gets a malloc'd token or NULL. */
bool bt_infprofile_parse_list(const char *body, size_t len,
                              void (*fn)(void *arg, const char *profile_id), void *arg,
                              char **next_token, char *err, size_t errlen);
#endif
