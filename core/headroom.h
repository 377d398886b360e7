/* Reservation-aware headroom per route and quota group, contract version 3
 * (DESIGN.md, docs/headroom.md): one evaluation frame per quota group, every figure
 * with a quality, one function per side and one rule for the side that binds; the
 * warning rules, table-driven (core/rules.h). */
#ifndef BEDTOP_HEADROOM_H
#define BEDTOP_HEADROOM_H
#include <math.h>

#include "core/config.h"
#include "core/model.h"
#include "core/speed.h"
/* The evaluation's layers, each file's functions in its own header: sides and formulas
 * (lowest), then rules (the load rules beneath the table, on its types) and frame, then
 * this file's, which runs them (scripts/lint keeps them from calling back up). */
#include "core/sides.h"
#include "core/formulas.h"
#include "core/rules.h"
#include "core/rulesload.h"
#include "core/frame.h"

/* The quota a route draws from: routes with equal keys share one quota (same
 * account or profile and Region, then the quota code, else endpoint, inference type
 * and model: base_model when set). */
void bt_quota_group_key(const struct bt_route *r, char *out, size_t n);
/* Whose account-wide daily quota ("Cross-Model Max Tokens Per Day", per account and
 * Region) route r draws on: its CloudWatch account, else its AWS profile ("": the
 * default credentials). The account's daily groups (the DAILY_ACCOUNT side) and the
 * cross-model ledger (core/ledger.h) both key by it and the Region. */
const char *bt_route_account_key(const struct bt_route *r);
/* Whether a caller of model_id, a ModelId the config does not name, seen in route r's
 * account and Region, draws from r's quota: the same endpoint, inference type and base
 * model (a model called directly that r reaches through an application inference
 * profile, for one); a ModelId cannot tell its context-length variant, so r's is
 * assumed. base_model: what model_id routes to when it is an application inference
 * profile (NULL: model_id itself), with its inference type (-1: from model_id's
 * prefix). Provisioned Throughput never does. */
bool bt_quota_shared_by(const struct bt_route *r, const char *model_id, const char *base_model,
                        int inference);

/* What a route costs at list prices (core/cost.h), evaluated in its group's frame:
 * always an estimate (no discounts or credits), unknown (NAN, with the reason) when
 * no price row or no usage reading prices it, never 0 for want of a price. */
struct bt_price_row;
struct bt_spend {
    double usd_per_hour;     /* the evaluated minute's spend x 60 (NAN unknown) */
    double usd_today;        /* since 00:00 UTC (NAN unknown) */
    enum bt_quality quality; /* estimate, or unknown */
    enum bt_quality today_q; /* estimate; lower-bound when some of the day is not read */
    const struct bt_price_row *row; /* the price row used (NULL: none) */
    char reason[192];        /* why a figure is unknown ("" when both are priced) */
    /* SPEND_SPIKE: the median of the last spend_spike_minutes minutes and of the
     * trailing baseline before them, USD per hour (NAN: not enough minutes; the
     * baseline also where the recent median is under the floor or cannot be above
     * spend_spike_factor times it: the rule needs no more) */
    double recent, baseline;
    int baseline_minutes;
};

#define BT_MAX_WARN BT_W_COUNT
/* The size of struct bt_eval: a whole number of pages. A route's written part (the
 * figures before `warnings`, and its first few warnings: 1.5 on average) is about
 * 3 kB of the ~9.9 kB; at a stride of whole pages it stays within one page of a big
 * evals array, and the slots no rule wrote stay untouched, never resident. At the
 * struct's own size the written parts landed in two pages of three for most routes:
 * 7.3 kB resident a route, 145 MB of a 20,000-route check. */
#define BT_EVAL_BYTES (3 * 4096)
/* One group's figures at one evaluation (issue 33, the group object): a quota group
 * (the routes on one quota, struct bt_group) or a daily group (the routes on one
 * daily quota). The evaluation works each group's figures out once, from all its
 * members, and each member's evaluation holds its groups' (an evaluation is read
 * alone too: bt_eval_route's copy, a what-if's); readers read them through
 * bt_eval_qgroup and bt_eval_day_group, never from the members again. A side's sum over
 * the group is in the side's figures (struct bt_side_fig group_used). */
struct bt_group_fig {
    int leader;              /* its first member in config order: a stable label */
    int n;                   /* its members, this route included (0: no such group) */
    int nunknown;            /* quota group: members whose use is unknown, on the side
                              * it sums (tpm, or mantle's input) */
    int unknown[2];          /* the first two of them in config order (-1: none) */
    double rate;             /* daily group: its settled tokens per minute now, what its
                              * day runs out at (NAN: unknown) */
};
struct bt_eval {
  union {
    char stride_[BT_EVAL_BYTES];
    struct {
    int route;
    int64_t now;
    int64_t minute;          /* the group's evaluated CloudWatch minute (0: none) */
    int64_t adm_minute;      /* newest admission scrape read (0: none) */
    int64_t data_minute;     /* this route's newest datapoint at or before `minute` */
    int64_t fresher_minute;  /* a datapoint newer than `minute`, not settled yet (0: none) */
    bool mantle;
    enum bt_frame_state state;
    /* this route, tokens per minute; a mantle route's follow its binding token side */
    double settled, estimated, held, used, reserved_per_min;
    enum bt_quality used_q, held_q;
    double reservation;      /* R, tokens per call */
    double in_flight;
    const char *reservation_source, *in_flight_source, *held_source, *reserved_source;
    /* service tiers: reserved-tier traffic (ResolvedServiceTier=reserved) taken out */
    double tier_reserved_share; /* of the route's calls, 0-1 (NAN: no tier series) */
    double tier_reserved_inv, tier_reserved_input, tier_reserved_output;
    /* requests accepted per minute (RPM): Invocations or admission admitted */
    double requests;
    enum bt_quality requests_q;
    const char *requests_source;
    /* its quota group's figures (struct bt_group_fig, read through bt_eval_qgroup):
     * every member, none dropped, is reached from group.leader through group_next in
     * the evals it was evaluated with (bt_group_next) */
    struct bt_group_fig group;
    int group_next;          /* the next member in config order (-1: the last) */
    /* every side, and the one that binds: headroom_pct and fits_more are its */
    struct bt_side_fig side[BT_SIDE_COUNT];
    enum bt_side binding;
    enum bt_side token_side; /* tpm, or mantle's binding input/output side */
    /* the token side's quota and figures (the route's TPM headline; its group's use
     * is the token side's, bt_eval_group_used) */
    double quota;
    enum bt_quota_source quota_source;
    char quota_code[32];
    double headroom_tpm;
    /* the binding side's */
    double headroom_pct, fits_more;
    enum bt_quality headroom_q;
    /* burndown: the resolved value and the one EstimatedTPMQuotaUsage implies */
    double burndown, burndown_measured;
    const char *burndown_source;
    /* context */
    double invocations, input_tokens, output_tokens, cache_read, cache_write;
    double client_errors, server_errors, server_errors_before, throttles_before;
    double avg_input, avg_output, max_tokens;
    double throttles, lat_p50, lat_p90, lat_p99, lat_avg;
    double conc_limit, queue_depth, littles_in_flight;
    double admitted, rejected, retries, completed, adm_throttled, adm_settled;
    double out_p50, out_p99;
    struct bt_speed speed;   /* output tokens per second against the trailing hour */
    double offered_growth, accepted_growth; /* over 5 minutes, NAN unknown */
    double recommended_max_tokens, fits_more_recommended;
    double tokens_today;     /* this route */
    /* known: a day sum, or every minute since midnight covered by a poll; lower-bound:
     * summed from the minutes covered, some of the day never asked (a failed or
     * missing day sum); unknown: none */
    enum bt_quality tokens_today_q;
    /* its daily groups' figures: [0] the model's (BT_SIDE_DAILY), [1] the account's
     * (BT_SIDE_DAILY_ACCOUNT); and the daily side nearest to running out, whose quota,
     * day and rate DAILY_QUOTA reads (BT_SIDE_COUNT: none applies; bt_eval_daily_side) */
    struct bt_group_fig day[2];
    enum bt_side daily;
    double rpm_quota;
    bool stale;
    char stale_reason[224];
    struct bt_spend spend;   /* what it costs (core/cost.h) */
    int64_t last_ok[BT_SRC_COUNT]; /* freshness per source: last good poll, 0 never */
    bool failing[BT_SRC_COUNT];    /* the source's last answer for this route an error */
    enum bt_status status;
    int nwarn;               /* before the warnings: the rules write them in order */
    struct bt_warning warnings[BT_MAX_WARN];
    };
  };
};
_Static_assert(sizeof(struct bt_eval) == BT_EVAL_BYTES,
               "struct bt_eval outgrew BT_EVAL_BYTES: make it a page more");

/* ---- Reading an evaluation (issue 33: the API around core) ----
 * What app/, tui/ and render/ read of a struct bt_eval beside its figures (bt_fig,
 * bt_fig_quality and bt_fig_source, core/figures.h): its verdict, its shape (mantle,
 * the sides, the binding one), its clocks and its quota's name. The views read these
 * and never the fields, which are core's to lay out (scripts/lint keeps it so). */
static inline enum bt_status bt_eval_status(const struct bt_eval *e)
{
    return e->status;
}
/* stale: its newest data is older than its source's cadence allows; the reason ("":
 * none given) */
static inline bool bt_eval_stale(const struct bt_eval *e)
{
    return e->stale;
}
static inline const char *bt_eval_stale_reason(const struct bt_eval *e)
{
    return e->stale_reason;
}
/* Its warnings, in the order the rules raised them: bt_eval_warning(e, i) for i in
 * 0 .. bt_eval_nwarn(e) - 1 (NULL outside). */
static inline int bt_eval_nwarn(const struct bt_eval *e)
{
    return e->nwarn;
}
static inline const struct bt_warning *bt_eval_warning(const struct bt_eval *e, int i)
{
    return i >= 0 && i < e->nwarn ? &e->warnings[i] : NULL;
}
/* A mantle route (input and output token quotas, no TPM side) */
static inline bool bt_eval_mantle(const struct bt_eval *e)
{
    return e->mantle;
}
/* The side that binds (headroom_pct and fits_more are its), and the token side the
 * TPM headline figures follow (tpm, or mantle's binding input or output side). */
static inline enum bt_side bt_eval_binding(const struct bt_eval *e)
{
    return e->binding;
}
static inline enum bt_side bt_eval_token_side(const struct bt_eval *e)
{
    return e->token_side;
}
/* Side s's figures (s < BT_SIDE_COUNT) */
static inline const struct bt_side_fig *bt_eval_side(const struct bt_eval *e, enum bt_side s)
{
    return &e->side[s];
}
/* The token side's quota code ("": none known) and the other routes on that quota */
static inline const char *bt_eval_quota_code(const struct bt_eval *e)
{
    return e->quota_code;
}
static inline int bt_eval_nshared(const struct bt_eval *e)
{
    return e->group.n > 1 ? e->group.n - 1 : 0;
}
/* Its quota group's figures, and its daily group's of side s (BT_SIDE_DAILY or
 * BT_SIDE_DAILY_ACCOUNT; NULL else) */
static inline const struct bt_group_fig *bt_eval_qgroup(const struct bt_eval *e)
{
    return &e->group;
}
static inline const struct bt_group_fig *bt_eval_day_group(const struct bt_eval *e, enum bt_side s)
{
    return s == BT_SIDE_DAILY ? &e->day[0] : s == BT_SIDE_DAILY_ACCOUNT ? &e->day[1] : NULL;
}
/* Whether its own use is unknown on the side its group sums (tpm, or mantle's input:
 * a group is all runtime or all mantle, the endpoint is in its key) */
static inline bool bt_eval_use_unknown(const struct bt_eval *e)
{
    return e->state == BT_FR_UNKNOWN ||
           e->side[e->mantle ? BT_SIDE_INPUT : BT_SIDE_TPM].used_q == BT_QL_UNKNOWN;
}
/* The other members of its quota group whose use is unknown: how many, and the first
 * of them in config order (-1: none) */
static inline int bt_eval_nunknown_others(const struct bt_eval *e)
{
    return e->group.nunknown - (e->group.nunknown && bt_eval_use_unknown(e) ? 1 : 0);
}
static inline int bt_eval_unknown_other(const struct bt_eval *e)
{
    if (!bt_eval_nunknown_others(e))
        return -1;
    return e->group.unknown[0] != e->route ? e->group.unknown[0] : e->group.unknown[1];
}
/* Its quota group's use on the token side (the TPM headline's used_group) */
static inline double bt_eval_group_used(const struct bt_eval *e)
{
    return e->side[e->token_side].group_used;
}
static inline enum bt_quality bt_eval_group_used_q(const struct bt_eval *e)
{
    return e->side[e->token_side].group_q;
}
/* The daily quota nearest to running out (DAILY_QUOTA's): its side (BT_SIDE_COUNT:
 * none applies), its quota (tokens per day), its group's tokens today and its
 * group's rate now; NAN where none applies */
static inline enum bt_side bt_eval_daily_side(const struct bt_eval *e)
{
    return e->daily;
}
static inline double bt_eval_tpd(const struct bt_eval *e)
{
    return e->daily < BT_SIDE_COUNT ? e->side[e->daily].quota : NAN;
}
static inline double bt_eval_group_today(const struct bt_eval *e)
{
    return e->daily < BT_SIDE_COUNT ? e->side[e->daily].group_used : NAN;
}
static inline double bt_eval_daily_rate(const struct bt_eval *e)
{
    const struct bt_group_fig *d = bt_eval_day_group(e, e->daily);
    return d ? d->rate : NAN;
}
/* Where the token side's quota came from (Service Quotas, config, default, ...) */
static inline enum bt_quota_source bt_eval_quota_source(const struct bt_eval *e)
{
    return e->quota_source;
}
/* The route it evaluates (its index in the config), and its quota group's first
 * member: walk the group with bt_group_next over the evals array it is in */
static inline int bt_eval_index(const struct bt_eval *e)
{
    return e->route;
}
static inline int bt_eval_group_first(const struct bt_eval *e)
{
    return e->group.leader;
}
/* What it costs (core/cost.h) and its output speed (core/speed.h) */
static inline const struct bt_spend *bt_eval_spend(const struct bt_eval *e)
{
    return &e->spend;
}
static inline const struct bt_speed *bt_eval_speed(const struct bt_eval *e)
{
    return &e->speed;
}
/* The clocks: when it was evaluated (JSON evaluated_at), the group's CloudWatch
 * minute evaluated (evaluated_minute; 0 none), the route's newest datapoint at or
 * before it (data_minute; 0 none), the newest admission scrape read (admission_at; 0
 * none), and what the frame holds at that minute (active, idle, unknown). */
static inline int64_t bt_eval_now(const struct bt_eval *e)
{
    return e->now;
}
static inline int64_t bt_eval_cw_minute(const struct bt_eval *e)
{
    return e->minute;
}
static inline int64_t bt_eval_data_minute(const struct bt_eval *e)
{
    return e->data_minute;
}
static inline int64_t bt_eval_adm_at(const struct bt_eval *e)
{
    return e->adm_minute;
}
static inline enum bt_frame_state bt_eval_state(const struct bt_eval *e)
{
    return e->state;
}

/* Evaluates every route at time now (the last complete minute before it); evals
 * holds cfg->nroutes entries. Routes on one quota are evaluated together. */
void bt_eval_all(const struct bt_config *cfg, const struct bt_store *st, int64_t now,
                 struct bt_eval *evals);
/* The members of e's quota group in config order, from the evals array e was
 * evaluated in (none dropped, whatever the group's size):
 *     for (int m = e->group.leader; m >= 0; m = bt_group_next(evals, m))
 * A chain that does not move forward (an eval never evaluated) ends. */
static inline int bt_group_next(const struct bt_eval *evals, int m)
{
    int n = evals[m].group_next;
    return n > m ? n : -1;
}
/* The first member of route r's quota group in evals (its label; r itself where the
 * route was never grouped). */
static inline int bt_group_leader(const struct bt_eval *evals, int r)
{
    int l = evals[r].group.leader;
    return l >= 0 ? l : r;
}

struct bt_group_input;

/* A quota group: the routes that draw from one quota (DESIGN.md "quota group"),
 * computed once per config by bt_eval_groups_new (sorted by group key, n log n) and
 * read by the evaluation, the rules, plan --limits, the observed ceiling and the
 * JSON. Issue 35's shares (who holds the quota) are a per-group list that belongs
 * here. */
struct bt_group {
    int leader;            /* its lowest route index */
    int n;                 /* members, the leader included */
    const int *members;    /* route indexes in config order */
};
/* The grouping of a config's routes (quota groups, daily groups): it depends on the
 * config alone, so a caller evaluating many minutes of one config computes it once. */
struct bt_eval_groups {
    int nroutes;
    int *group;            /* each route's quota group, as its lowest route index */
    int ngroups;
    struct bt_group *groups;  /* in order of their leaders */
    int *group_index;      /* each route's index in groups[] */
    int *member;           /* every group's members, one run a group (groups[].members) */
    int *daily[2];         /* runtime routes by daily key: [0] the model's, [1] the account's */
    int *daily_run[2];     /* where each run of equal keys starts in daily[]; one more: the end */
    int ndaily_runs[2];
    struct bt_group_input *input; /* each route's fields the groups were keyed by (NULL:
                                   * bt_eval_groups_once's, which renew does not keep) */
};
struct bt_eval_groups *bt_eval_groups_new(const struct bt_config *cfg);
/* The same grouping for a caller that evaluates with it and frees it (never renews
 * it): without each route's keyed fields (input), ~550 bytes a route (11 MB of a
 * 20,000-route check's peak, made again by every evaluation, forecast and ceiling). */
struct bt_eval_groups *bt_eval_groups_once(const struct bt_config *cfg);
void bt_eval_groups_free(struct bt_eval_groups *g);
/* g while cfg's routes still key the same groups (a replay's seek can learn a quota
 * code, a base model or an inference type), else g freed and cfg's new grouping
 * (g NULL: new): a replay evaluating every minute keys its groups once, not at every
 * evaluation (their snprintf and sorts were 7 % of an export's instructions). */
struct bt_eval_groups *bt_eval_groups_renew(struct bt_eval_groups *g,
                                            const struct bt_config *cfg);
/* Route r's quota group (r in 0..g->nroutes-1). */
const struct bt_group *bt_eval_group_of(const struct bt_eval_groups *g, int r);
/* bt_eval_all with g (of this cfg); figures_only leaves the warnings out (status OK,
 * none) and the output speed (zero): the sides, the binding one and the figures are
 * the same. need (NULL: every
 * route): only the quota groups with a route needed are evaluated (the others' evals
 * are left as they were), and the daily sides are left out (not applying): the
 * quota sides' figures of those groups are the same. */
void bt_eval_all_with(const struct bt_config *cfg, const struct bt_store *st, int64_t now,
                      const struct bt_eval_groups *g, bool figures_only, const bool *need,
                      struct bt_eval *evals);
/* One route (its quota group is evaluated with it). */
void bt_eval_route(const struct bt_config *cfg, const struct bt_store *st, int route,
                   int64_t now, struct bt_eval *out);
/* Tokens today, one reading (issue 31): every reader of the day (the daily sides, the
 * day's spend, the cross-model ledger) reads it through this minute, the frame's: the
 * group's evaluated minute, else the route's newest data minute (0: none). A member
 * unknown at its group's minute is read through that minute too, never through its
 * own newest one (which may hold minutes not yet settled). */
static inline int64_t bt_eval_day_minute(const struct bt_eval *e)
{
    return e->minute ? e->minute : e->data_minute;
}
/* The warning codes e holds, one bit each (1u << code): what the event log compares
 * minute to minute, the incident's points and the replay's next/previous warning read.
 * Bit 31 is never a code (the replay marks throttling there). */
_Static_assert(BT_W_COUNT <= 31, "a warning code's bit is below bit 31");
static inline uint32_t bt_eval_warn_bits(const struct bt_eval *e)
{
    uint32_t b = 0;
    for (int w = 0; w < e->nwarn; w++)
        b |= 1u << e->warnings[w].code;
    return b;
}
#endif
