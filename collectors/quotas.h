/* Service Quotas collector: ListServiceQuotas (JSON 1.1, service code
 * "bedrock") every 6 hours; each quota is tied to routes by its UsageMetric (the
 * dimensions name the ModelId) first, by a configured or learned quota code
 * second, by name (data/quota-names.conf) last, and says which; routes left
 * without a binding quota fall back to the published defaults
 * (ListAWSDefaultServiceQuotas). Application inference profiles are resolved
 * first (collectors/infprofile.h). Matching never guesses: a route whose model
 * cannot be tied to exactly one quota stays unknown, with the reason shown.
 * Files: quota_wire.c (requests, pages), quota_names.c (the name rules),
 * quota_match.c (the index and the matcher), quota_collect.c (the collector). */
#ifndef BEDTOP_QUOTAS_H
#define BEDTOP_QUOTAS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "collectors/collector.h"
#include "core/util.h"

extern const struct bt_collector_ops bt_quotas_collector;

#define BT_SQ_REFRESH (6 * 3600)   /* applied quotas change rarely */

struct bt_sq_quota {
    char code[32];
    char name[256];
    double value;
    enum bt_adjustable adjustable; /* the listing's Adjustable (unknown: not given) */
    /* UsageMetric, when the listing carries one: its namespace, metric name and the
     * model its dimensions name (ModelId on AWS/Bedrock, Model on AWS/BedrockMantle) */
    char um_ns[40];
    char um_metric[64];
    char um_model[192];
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

/* data/quota-names.conf: quota-name rows ("<name with {model}> = <kind>
 * <inference> [context=<label>]") and model-ID hints ("glob = display name"). */
struct bt_quota_row {
    char prefix[160], suffix[96];   /* the literal text around {model} */
    enum bt_quota_kind kind;
    int inference;                  /* enum bt_inference, -1: any (on-demand, cross-region,
                                     * global), BT_QROW_ACCOUNT: account-wide, no {model} */
    char context[16];               /* "" standard; "1m" ... */
    int line;
};
#define BT_QROW_ACCOUNT (-3)
struct bt_quota_hint {
    char pattern[192];
    char name[192];
};
struct bt_quota_table {
    struct bt_quota_row *rows;
    int nrows;
    struct bt_quota_hint *h;
    int n;
};
bool bt_quota_table_parse(struct bt_quota_table *t, const char *text, const char *name,
                          char *err, size_t errlen);
/* Loads quota-names.conf from $BEDTOP_DATADIR, the install dir or ./data. */
bool bt_quota_table_load_default(struct bt_quota_table *t, char *err, size_t errlen);
void bt_quota_table_free(struct bt_quota_table *t);

/* One reading of a quota name: "Cross-Region InvokeModel tokens per minute for
 * Anthropic Claude Sonnet 4.5 V1" -> TPM, cross-region, model "Anthropic Claude
 * Sonnet 4.5 V1". */
struct bt_qname {
    enum bt_quota_kind kind;
    int inference;           /* enum bt_inference, or -1: every inference type */
    char context[16];
    char model[256];
    int line;                /* the row's line in quota-names.conf */
};
/* 0: no row fits; 1: out[0] is the reading; 2: two rows of equal weight read it
 * differently (out[0], out[1]): ambiguous, never to be guessed. */
int bt_quotas_parse_name(const struct bt_quota_table *t, const char *quota_name,
                         struct bt_qname out[2]);
/* Keys for the matcher's index: a display name's letters and digits, whole and
 * without up to BT_QKEYS - 1 leading (vendor) tokens; a model ID's (its hints'
 * names when a hint covers it). Equal keys are a candidate, never a match: the
 * matcher confirms with bt_quotas_model_matches. */
#define BT_QKEYS 4
int bt_quotas_display_keys(const char *display, uint64_t keys[BT_QKEYS]);
int bt_quotas_model_keys(const char *model_id, const struct bt_quota_table *t,
                         uint64_t keys[BT_QKEYS]);
/* Does a display name ("Anthropic Claude Sonnet 4.5 V1") name this model ID
 * (us.anthropic.claude-sonnet-4-5-20250929-v1:0)? Hints for the ID, when any
 * match it, replace the derived comparison. */
bool bt_quotas_model_matches(const char *model_id, const char *display,
                             const struct bt_quota_table *t);
/* The model a route's quota is named after: base_model when set (application
 * inference profiles), else the model ID. */
const char *bt_quotas_route_model(const struct bt_route *r);
/* The quota kinds a route can draw from (runtime: TPM, RPM, daily, concurrency,
 * the account-wide daily; mantle: input and output; provisioned: none). */
size_t bt_quotas_route_kinds(const struct bt_route *r, const enum bt_quota_kind **kinds);

/* An index of one listing, built once: quotas by UsageMetric model, by code, and by
 * (kind, inference, context, label) for every reading of their names. */
struct bt_quota_index;
struct bt_quota_index *bt_quota_index_build(const struct bt_sq_list *l,
                                            const struct bt_quota_table *t);
void bt_quota_index_free(struct bt_quota_index *ix);
/* The quota of kind k for route r: UsageMetric first, then a code (r->quota_code for
 * the binding quota, else learned: the code r->quota[k] had from an earlier
 * listing), then the name rules. Returns the index in the listing and *by; -1 when
 * none; -2 when ambiguous (two quotas with different values, or a name two rows read
 * differently), with why set. */
int bt_quota_index_match(struct bt_quota_index *ix, const struct bt_route *r,
                         enum bt_quota_kind k, enum bt_quota_match *by, char *why, size_t whylen);
/* Index entries looked at so far (hash-chain entries and confirmed candidates): the
 * cost of matching, counted, never timed. */
unsigned long bt_quota_index_comparisons(const struct bt_quota_index *ix);
/* One route, one kind, over a listing: an index built for this call (tests). */
int bt_quotas_match(const struct bt_route *r, enum bt_quota_kind k, const struct bt_sq_list *l,
                    const struct bt_quota_table *t, char *why, size_t whylen);
/* The value to use for a match: the daily quota doubles for cross-region calls. */
double bt_quotas_effective_value(const struct bt_route *r, enum bt_quota_kind k,
                                 const struct bt_sq_quota *q);
/* ListServiceQuotas/ListAWSDefaultServiceQuotas requests sent so far (pages included). */
unsigned long bt_quotas_requests(void *self);
#endif
