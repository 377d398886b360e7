/* Service Quotas collector: ListServiceQuotas (JSON 1.1, service code
 * "bedrock") every 6 hours, matched to runtime routes by quota code or by
 * name; routes left without a TPM quota fall back to the published defaults
 * (ListAWSDefaultServiceQuotas). Matching never guesses: a route whose model
 * cannot be tied to exactly one quota name stays unknown. */
#ifndef BEDTOP_QUOTAS_H
#define BEDTOP_QUOTAS_H
#include <stdbool.h>
#include <stddef.h>

#include "collectors/collector.h"
#include "core/util.h"

extern const struct bt_collector_ops bt_quotas_collector;

#define BT_SQ_REFRESH (6 * 3600)   /* applied quotas change rarely */

struct bt_sq_quota {
    char code[32];
    char name[256];
    double value;
};
struct bt_sq_list {
    struct bt_sq_quota *q;
    int n, cap;
};
void bt_sq_list_free(struct bt_sq_list *l);

/* ListServiceQuotas / ListAWSDefaultServiceQuotas body. */
void bt_quotas_request_json(struct bt_buf *out, const char *next_token);
/* Appends a page's quotas to l; *next_token gets a malloc'd token or NULL. */
bool bt_quotas_parse_page(const char *body, size_t len, struct bt_sq_list *l,
                          char **next_token, char *err, size_t errlen);

/* Model-ID-to-display-name hints (data/quota-names.conf): "glob = display name". */
struct bt_quota_hint {
    char pattern[192];
    char name[192];
};
struct bt_quota_hints {
    struct bt_quota_hint *h;
    int n;
};
bool bt_quota_hints_parse(struct bt_quota_hints *h, const char *text, const char *name,
                          char *err, size_t errlen);
/* Loads quota-names.conf from $BEDTOP_DATADIR, the install dir or ./data. */
bool bt_quota_hints_load_default(struct bt_quota_hints *h, char *err, size_t errlen);
void bt_quota_hints_free(struct bt_quota_hints *h);

/* What a Bedrock quota name is about: "Cross-region model inference tokens per
 * minute for Anthropic Claude Sonnet 4.5 V1" -> TPM, cross-region, model
 * "Anthropic Claude Sonnet 4.5 V1". TPD quotas apply to every inference route
 * (*any_inference). False for quotas that are none of TPM/RPM/TPD. */
bool bt_quotas_parse_name(const char *quota_name, enum bt_quota_kind *kind,
                          enum bt_inference *inf, bool *any_inference, char *model, size_t n);
/* Does a display name ("Anthropic Claude Sonnet 4.5 V1") name this model ID
 * (us.anthropic.claude-sonnet-4-5-20250929-v1:0)? Hints for the ID, when any
 * match it, replace the derived comparison. */
bool bt_quotas_model_matches(const char *model_id, const char *display,
                             const struct bt_quota_hints *hints);
/* The quota of kind k for route r: by r->quota_code for TPM when set, else by
 * name. Returns the index in l, or -1 when none or ambiguous. */
int bt_quotas_match(const struct bt_route *r, enum bt_quota_kind k, const struct bt_sq_list *l,
                    const struct bt_quota_hints *hints);
/* The value to use for a match: the daily quota doubles for cross-region calls. */
double bt_quotas_effective_value(const struct bt_route *r, enum bt_quota_kind k,
                                 const struct bt_sq_quota *q);
/* ListServiceQuotas/ListAWSDefaultServiceQuotas requests sent so far (pages included). */
unsigned long bt_quotas_requests(void *self);
#endif
