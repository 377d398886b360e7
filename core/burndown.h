/* The burndown table: output-token multiplier by model-ID pattern, optionally
 * scoped to an endpoint. It lives in a data file (data/burndown.conf) that config
 * can extend; never a constant. */
#ifndef BEDTOP_BURNDOWN_H
#define BEDTOP_BURNDOWN_H
#include <stdbool.h>
#include <stddef.h>

struct bt_burndown_rule {
    char pattern[192];       /* fnmatch(3) glob against the model ID */
    double factor;
    int endpoint;            /* enum bt_endpoint, or -1: every endpoint */
    char origin[64];         /* where the row was read: "burndown.conf:31", "config" */
};

struct bt_burndown {
    struct bt_burndown_rule *rules; /* later rules win (user rules come after the data file) */
    int n;
};

/* Parses "pattern = factor [endpoint=runtime|mantle]" lines (# and ; comments). */
bool bt_burndown_parse(struct bt_burndown *b, const char *text, const char *name, char *err,
                       size_t errlen);
/* io/conffile.h loads the file (bt_burndown_load_file, bt_burndown_load_default). */
/* endpoint: enum bt_endpoint or -1 (every endpoint); origin: "file:line" or "config". */
void bt_burndown_add(struct bt_burndown *b, const char *pattern, double factor, int endpoint,
                     const char *origin);
/* The rule for a model ID on an endpoint (enum bt_endpoint): the last matching
 * row whose endpoint scope fits; NULL when none (factor 1). The region prefix of
 * an inference profile (us., eu., global.) is ignored in matching. */
const struct bt_burndown_rule *bt_burndown_find(const struct bt_burndown *b, const char *model_id,
                                                int endpoint);
/* Factor for a model ID on bedrock-runtime; 1 when nothing but the catch-all "*"
 * matches (*matched false). */
double bt_burndown_lookup(const struct bt_burndown *b, const char *model_id, bool *matched);
/* "burndown.conf:31 anthropic.claude-*-4-8* = 15 (runtime)": names the row used. */
void bt_burndown_row_text(const struct bt_burndown_rule *row, char *out, size_t n);
void bt_burndown_free(struct bt_burndown *b);

/* For a high-burndown model (> 5): the hold a call may reach if the in-processing
 * adjustment charges output at the burndown rate, input + max_tokens x burndown =
 * R + max_tokens x (burndown - 1) (R = input + max_tokens). AWS does not document
 * whether holds grow during generation, so it is shown beside R, never used by
 * headroom. NAN when burndown <= 5 or a figure is unknown. */
double bt_burndown_hold_bound(double reservation, double max_tokens, double burndown);

struct bt_route;
/* Sets a route's burndown, burndown_source ("table", "default") and burndown_row
 * from the table, for its base model (else model) on its endpoint. */
void bt_route_burndown(struct bt_route *r, const struct bt_burndown *b);
#endif
