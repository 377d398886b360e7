/* Who holds the quota (DESIGN.md "Who holds the quota, and what it costs (version
 * 4)"): a quota group's use split into shares by the admission counters' team label,
 * by mantle project, by route, with the callers outside the config named beside them.
 *
 * The raw readings behind the team shares are the admission series themselves
 * (every label kept, so the team label too): the store keeps each series' own rate
 * of the settled and reserved token counters and its own in-flight and held
 * gauges, per minute (struct bt_series_store), live and in replay alike (a
 * recording keeps the readings, gauges included; the shares are derived here). */
#ifndef BEDTOP_SHARES_H
#define BEDTOP_SHARES_H
#include "core/headroom.h"

/* ---- the per-series store (held in struct bt_store, core/counters.c feeds it) ---- */

/* Keeps one series' value of sig at `arrival`'s minute: a counter's per-series rate
 * (core/counters.c) or a gauge's reading. */
void bt_series_store_put(struct bt_store *s, int route, const char *series, enum bt_signal sig,
                         double value, int64_t arrival);
/* How many series of route the store follows. */
int bt_series_store_count(const struct bt_store *s, int route);

/* The value of a label in a series id (`name="value",...`, bt_reading.series): false
 * when the label is absent (or the id is a hash of a longer one). */
bool bt_series_label(const char *series, const char *label, char *out, size_t n);

/* ---- shares ---- */

/* tag: the application inference profiles' tag the config's attribute_by = tag:KEY
 * names (ListTagsForResource, collectors/tags.c), one value per route. */
enum bt_share_by { BT_SHARE_TEAM, BT_SHARE_TAG, BT_SHARE_PROJECT, BT_SHARE_ROUTE, BT_SHARE_COUNT };
const char *bt_share_by_name(enum bt_share_by b); /* team tag project route */
int bt_share_by_parse(const char *s);             /* -1: none of them */
/* The series id of a share read back from bedtop serve's
 * bedtop_share_used_tokens_per_minute{group,by,name} (--source prometheus+http):
 * `__share="team",name="search"` (a label Prometheus reserves, so no admission
 * series has it; by team or tag), kept as the held gauge of one route of the group
 * at its admission scrape; the group's shares by team (by tag, with attribute_by)
 * are then these, not the routes' series split again. False when the id would not
 * fit n. */
bool bt_share_readback_id(enum bt_share_by by, const char *name, char *out, size_t n);

#define BT_SHARE_UNATTRIBUTED "unattributed"
#define BT_SHARE_OUTSIDE "outside the config"
#define BT_SHARE_OTHER "other"
struct bt_share {
    enum bt_share_by by;
    char name[96];           /* the team, project or route; "unattributed"; "other" */
    double used;             /* tokens per minute of the group's token side (NAN unknown) */
    double pct;              /* of the group's use (NAN unknown) */
    enum bt_quality quality; /* a share from a bound is that bound */
    const char *source;      /* "admission" "config" "route" "metrics-insights" ... */
    char reason[224];        /* unattributed / outside: why it cannot be told apart */
    bool outside;            /* the callers outside the config: not part of the sum */
};
struct bt_share_list {
    enum bt_share_by by;
    int group;               /* the group's leader route */
    double group_used;       /* the group's token-side use; the shares sum to it */
    enum bt_quality group_q;
    struct bt_share *s;      /* largest first; unattributed and outside last */
    int n, cap;
    int told;                /* bt_shares_history: the minutes some holder was told apart in */
};
/* The shares of group g (its members evaluated in evals) by `by`; label: the team
 * label (cfg->share_label when NULL). Replaces out's shares. */
void bt_shares_group(const struct bt_config *cfg, const struct bt_store *st,
                     const struct bt_eval *evals, const struct bt_group *g, enum bt_share_by by,
                     const char *label, struct bt_share_list *out);
/* The same for the group of route r, its members reached through the evals' group
 * chain (bt_group_next): what a view that holds only the evals reads. */
void bt_shares_of_route(const struct bt_config *cfg, const struct bt_store *st,
                        const struct bt_eval *evals, int r, enum bt_share_by by,
                        const char *label, struct bt_share_list *out);
/* Route r's shares by `by` as a route's JSON and CSV list them: the callers outside
 * the config once, in the route shares, and in no other list. Replaces out's shares. */
void bt_shares_shown(const struct bt_config *cfg, const struct bt_store *st,
                     const struct bt_eval *evals, int r, enum bt_share_by by,
                     struct bt_share_list *out);
/* bt_shares_shown once per quota group and by: a writer of every route's shares keeps
 * its group's lists from its first member to its last (a list a route was the whole
 * group's each time: 4,000 routes on one quota spent 70 % of a JSON check there, N x N).
 * One memo serves one evals array as evaluated: bt_share_memo_reset before the next
 * evaluation, bt_share_memo_free at the end. A zeroed memo is empty. */
struct bt_share_memo {
    int n;                        /* routes the lists are indexed by */
    struct bt_share_list *lists;  /* [leader * BT_SHARE_COUNT + by] */
    bool *have;                   /* the same index: computed */
};
/* Route r's list by `by`: its group's, computed at the first member asked (routes
 * alone on their quota: into scratch, as bt_shares_shown). Valid until
 * bt_share_memo_done for the group's last member, the reset or the free (scratch's:
 * until scratch is used again). */
const struct bt_share_list *bt_share_memo_get(struct bt_share_memo *m,
                                              const struct bt_config *cfg,
                                              const struct bt_store *st,
                                              const struct bt_eval *evals, int r,
                                              enum bt_share_by by,
                                              struct bt_share_list *scratch);
/* After route r's shares are written: its group's lists go when r is its last member. */
void bt_share_memo_done(struct bt_share_memo *m, const struct bt_eval *evals, int r);
void bt_share_memo_reset(struct bt_share_memo *m);
void bt_share_memo_free(struct bt_share_memo *m);
/* Each holder's mean use over the `minutes` minutes up to now: route r's group
 * evaluated a frame a minute as it was then (core/headroom.h), the shares by `by` of
 * each frame summed and divided by the minutes whose group use was known (returned;
 * 0: none). out->group_used is the group's mean use over those minutes; out->told
 * how many of them had a holder told apart (by team: the minutes with per-series
 * readings; before them the whole use is unattributed). */
int bt_shares_history(const struct bt_config *cfg, const struct bt_store *st, int64_t now, int r,
                      enum bt_share_by by, int minutes, struct bt_share_list *out);
/* plan ROUTE --limits --by team: token budgets per holder of route r's quota group
 * that fit the quota. What the holders may use together is the quota less the
 * reserve (BT_LIMITS_RESERVE of core/plan.h's limits) and less what cannot be told
 * apart (unattributed: nobody's budget can hold it back). Each holder's demand is its
 * use now; when the demands fit, each gets its demand and an equal part of what is
 * left; when they do not, one cap L (max-min fairness: sum of min(demand, L) = what
 * is left) bounds every holder, so a small holder keeps its use and the big ones
 * share the rest. */
struct bt_share_budget {
    char name[96];
    double demand, budget;   /* tokens per minute */
    enum bt_quality quality; /* the demand's */
};
struct bt_share_budgets {
    enum bt_share_by by;
    double quota, reserve, unattributed, available; /* NAN unknown */
    double cap;              /* the max-min cap when oversubscribed (NAN: demands fit) */
    struct bt_share_budget *b;
    int n;
};
/* False (why set) when the quota or the group's use is unknown, or no holder is told
 * apart. */
bool bt_shares_budgets(const struct bt_config *cfg, const struct bt_store *st, int64_t now, int r,
                       enum bt_share_by by, double reserve_share, struct bt_share_budgets *out,
                       char *why, size_t n);
void bt_shares_budgets_free(struct bt_share_budgets *b);
/* The incident report's "who held the quota when it ran out": route r's group, each
 * data minute from `from` on (n of them) evaluated as the replay showed it then, by
 * team where the admission counters tell any team apart in the window, else by route:
 * the BT_SHARE_MINUTES_TOP largest holders over the window, the rest as "other", and
 * "unattributed"; worst is the minute of the least headroom. */
#define BT_SHARE_MINUTES_TOP 5
struct bt_replay;
struct bt_share_minutes {
    enum bt_share_by by;
    int route;
    int64_t from;
    int n;
    int nh;                  /* holders charted */
    char name[BT_SHARE_MINUTES_TOP + 2][96];
    double *v;               /* nh x n: v[h * n + i], NAN unknown */
    double *quota;           /* n */
    int worst;               /* the minute of the least headroom (-1: none known) */
};
void bt_share_minutes_build(const struct bt_replay *rp, int r, int64_t from, int n,
                            struct bt_share_minutes *out);
void bt_share_minutes_free(struct bt_share_minutes *sm);
/* Holder h's line of the stacked chart at minute i: the use of holders 0..h summed
 * (NAN once one of them is unknown), so the top line is the group's use. */
double bt_share_minutes_stacked(const struct bt_share_minutes *sm, int h, int i);
/* The holders at minute i (0..n-1) of sm: out[h] for each of its nh holders, with its
 * name, its use (NAN unknown; quality unknown then) and its share of what the known
 * holders used together (NAN when its use is unknown or nobody used any). Returns
 * that sum. Not bt_shares_finish's rule: a minute nobody used has no share of 0 %,
 * and the holders keep the window's order (largest over the window first). */
double bt_share_minutes_at(const struct bt_share_minutes *sm, int i,
                           struct bt_share out[BT_SHARE_MINUTES_TOP + 2]);
/* Keeps the top n shares by use (unattributed and outside keep their own rows) and
 * folds the rest into one "other" share: bounded cardinality for serve. */
void bt_shares_top(struct bt_share_list *l, int n);
void bt_shares_free(struct bt_share_list *l);
/* "search 61%, ads 30%": the biggest holders of the group by team where the
 * admission counters tell them apart, else by route; "" when there is nothing to
 * name. For SHARED_QUOTA. */
void bt_shares_holders(const struct bt_config *cfg, const struct bt_store *st,
                       const struct bt_eval *evals, const struct bt_group *g, int most, char *out,
                       size_t n);
/* SHARED_QUOTA of every member of g names the biggest holders with their share
 * ("; the biggest holders by team: search 61%, ads 30%"), as many as fit. */
void bt_shares_say_holders(const struct bt_config *cfg, const struct bt_store *st,
                           struct bt_eval *evals, const struct bt_group *g);
#endif
