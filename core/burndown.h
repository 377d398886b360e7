/* The burndown table: output-token multiplier by model-ID pattern, optionally
 * scoped to an endpoint. It lives in a data file (data/burndown.conf) that config
 * can extend; never a constant. */
#ifndef BEDTOP_BURNDOWN_H
#define BEDTOP_BURNDOWN_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bt_burndown_rule {
    char pattern[192];       /* fnmatch(3) glob against the model ID */
    double factor;
    int endpoint;            /* enum bt_endpoint, or -1: every endpoint */
    bool family;             /* a family floor ("family" after the factor): an unlisted
                              * member of the family gets it, unverified */
    char origin[64];         /* where the row was read: "burndown.conf:31", "config" */
};

struct bt_burndown {
    struct bt_burndown_rule *rules; /* later rules win (user rules come after the data file) */
    int n;
};

/* Parses "pattern = factor [endpoint=runtime|mantle] [family]" lines (# and ;
 * comments). */
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

/* A measured burndown and the value it is compared with disagree: by more than
 * 0.5 and more than a fifth of the expected value (false when either is NaN). */
bool bt_burndown_disagrees(double measured, double expected);

/* The steady-measurement rule (DESIGN.md "Coverage and the catalogue"): over the
 * BT_BURNDOWN_WINDOW minutes before `through`, each minute with at least
 * BT_BURNDOWN_MIN_OUTPUT output tokens and an EstimatedTPMQuotaUsage datapoint
 * measures (Estimated - Input - CacheWrite) / Output; with at least
 * BT_BURNDOWN_MIN_MINUTES such minutes whose spread (max - min) is at most
 * BT_BURNDOWN_MAX_SPREAD of their median, the median is steady (a whole number
 * when within 3 % of one, as every published rate is; else to two decimals). */
#define BT_BURNDOWN_WINDOW 15
#define BT_BURNDOWN_MIN_MINUTES 5
#define BT_BURNDOWN_MIN_OUTPUT 1000
#define BT_BURNDOWN_MAX_SPREAD 0.10
struct bt_burndown_steady {
    double value;            /* the median, NAN when not steady */
    double spread;           /* (max - min) / median of the minutes used, NAN with none */
    int minutes;             /* minutes with enough output and an estimate */
};
/* The minutes the measurement reads, oldest first: [i] is the minute that starts
 * 60 x (BT_BURNDOWN_WINDOW - i) s before the minute of `through`, so the last is
 * the newest that has ended; NAN where no value is held. The store fills it
 * (bt_route_burndown_settle, core/model.h): the measurement reads no store. */
struct bt_burndown_window {
    double est[BT_BURNDOWN_WINDOW];  /* EstimatedTPMQuotaUsage */
    double out[BT_BURNDOWN_WINDOW];  /* OutputTokenCount */
    double in[BT_BURNDOWN_WINDOW];   /* InputTokenCount */
    double cw[BT_BURNDOWN_WINDOW];   /* CacheWriteInputTokenCount */
};
void bt_burndown_measure(const struct bt_burndown_window *w, struct bt_burndown_steady *out);

struct bt_route;
/* Sets a route's prior (burndown_prior, burndown_prior_source: "config" when the
 * config set it, else "table", "family" or "default"; "none" on mantle) and
 * burndown_row (the table row for its base model, else model, on its endpoint,
 * named even when the config wins), and makes the prior the value used. */
void bt_route_burndown(struct bt_route *r, const struct bt_burndown *b);
/* Whether a measurement can settle the route's burndown: its prior is set and it
 * is not mantle's "none". */
bool bt_route_burndown_settles(const struct bt_route *r);
/* The value used, in order: the config; the steady measurement m (a table row it
 * agrees with stays, exact, and is verified by it); the table row; the family
 * floor; 1. Sets burndown, burndown_source, burndown_verified,
 * burndown_steady(_minutes); nothing when the route does not settle. The store
 * runs it over its own minutes (bt_route_burndown_settle, core/model.h). */
void bt_route_burndown_steady(struct bt_route *r, const struct bt_burndown_steady *m);
#endif
