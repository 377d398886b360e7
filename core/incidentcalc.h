/* The figures of the incident write-up (core/incidentcalc.c; core/reportcalc.h, which
 * includes this header, has the quota-increase request's). Pure functions over a
 * recording's evaluations; render/ lays them out, app/ writes the files. */
#ifndef BEDTOP_INCIDENTCALC_H
#define BEDTOP_INCIDENTCALC_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/dataminute.h"
#include "core/events.h"
#include "core/headroom.h"
#include "core/model.h"
#include "core/recording.h"

/* ---- incident write-up ---- */
/* One route at one data minute, as bedtop showed it (NAN unknown). */
struct bt_inc_point {
    enum bt_status status;
    double headroom_pct;     /* the binding side's */
    enum bt_side binding;    /* which side that is */
    double side_pct[2];      /* the sides bt_inc_side names (NAN: not a limit here) */
    double side_used[2];     /* the group's used on that side, tokens per minute */
    double side_quota[2];
    double throttles;        /* per minute */
    double offered, accepted; /* calls per minute */
    double lat_p50, lat_p99; /* ms */
    uint64_t warn;           /* bit per warning code */
    /* every side's headroom % and its quality (NAN: not a limit here), so a chart can
     * draw the side that binds (the daily one too) and mark a bound as a bound */
    double pct[BT_SIDE_COUNT];
    enum bt_quality pct_q[BT_SIDE_COUNT];
    double quota[BT_SIDE_COUNT];
    enum bt_quality headroom_q; /* the binding side's */
};

/* The timeline: the event log's entries (core/events.h, the one the dashboard shows
 * with `e`: status changes, warnings raised and cleared, collector failures and
 * recoveries, markers) in the window, with the data changes the log does not carry
 * (throttling starting and stopping, a quota's new value) from the per-minute points. */
enum bt_tl_kind { BT_TL_STATUS, BT_TL_WARN_ON, BT_TL_WARN_OFF, BT_TL_MARKER, BT_TL_QUOTA,
                  BT_TL_THROTTLE_ON, BT_TL_THROTTLE_OFF, BT_TL_FAILED, BT_TL_RECOVERED };
struct bt_tl_entry {
    int64_t minute;          /* data minute */
    enum bt_tl_kind kind;
    int route;               /* -1: every route (markers, a source's failure) */
    const struct bt_logent *ev; /* the event log's entry (NULL: a data change) */
    enum bt_status from, to; /* BT_TL_STATUS */
    enum bt_wcode code;      /* BT_TL_WARN_* */
    enum bt_status severity;
    double value;            /* BT_TL_QUOTA: the new value; BT_TL_THROTTLE_ON: throttles/min */
    int side;                /* BT_TL_QUOTA: the side (bt_inc_point's side index) */
    char text[320];          /* the warning's message, the marker's note, the log's line */
    int order;               /* as added (ties of the time order keep it) */
};

/* A cause the warnings named, with the route-minutes that named it. */
struct bt_inc_cause {
    enum bt_wcode code;
    const char *action;      /* the remedy core attached (tells causes of one code apart) */
    enum bt_status severity; /* the worst seen */
    int minutes;             /* route-minutes it was named */
    int crit_minutes;
    int64_t first;           /* data minute first named */
    int route;               /* the route where first named */
    char message[320];       /* as first named */
    uint64_t routes;         /* bit per route (first 64) that named it */
    bool caveat;             /* about the data, not the load (STALE, QUOTA_UNKNOWN, ...):
                              * listed apart, after the causes */
    bool standing;           /* named already at the window's first minute: a condition
                              * that did not start in the window (ranked after the others) */
};

struct bt_inc_route {
    bool affected;           /* status worse than at the window's start, or throttled */
    bool worsened;           /* status worse than at the window's start */
    enum bt_status worst, start_status;
    double worst_pct;        /* lowest headroom of the binding side */
    int64_t worst_minute;
    enum bt_side worst_side; /* the side that bound at the lowest headroom */
    int throttled_minutes;
    bool admission;          /* offered and accepted from the admission counters (in some
                              * minute), else CloudWatch (offered = accepted + throttled) */
    double throttles;        /* total throttled requests */
    int64_t first_throttle, last_throttle; /* data minutes (0: none) */
    int64_t recovered;       /* first minute back at the start status after the worst (0: not) */
    /* coverage (issue 31): the minutes of the window whose CloudWatch figures are known
     * (a datapoint, or asked for by a good poll and idle); the rest are unknown */
    int covered_minutes;
    bool coverage_inferred;  /* the recording has no coverage records for the route: a
                              * minute after a good poll counts as asked (format 2, demo) */
    int64_t first_unknown, last_unknown; /* data minutes (0: none) */
};

#define BT_INC_MAX_CAUSES 32
struct bt_incident {
    int64_t from, to;        /* data minutes, inclusive */
    int n;                   /* minutes */
    int nroutes;
    struct bt_inc_point *pt; /* nroutes x n: pt[r * n + i] is minute from + 60 i */
    struct bt_inc_route *route;
    bool *mantle;            /* per route: two sides */
    bool *shown;             /* per route: considered (keep), else every figure is empty */
    int *group;              /* per route: its quota group's leader (bt_eval.group.leader):
                              * routes of one group share every side's headroom */
    int nshown;
    struct bt_evlog *log;    /* the recording's whole event log the timeline is taken from */
    struct bt_tl_entry *tl;
    int ntl;
    struct bt_inc_cause cause[BT_INC_MAX_CAUSES];
    int ncause;              /* ranked: causes that began in the window before standing
                              * ones, then crit minutes, then minutes, then first seen */
    int naffected;
    int64_t marker_minute[64]; /* the markers on the data-minute clock (first 64) */
    const char *marker_text[64];
    int nmarkers;
};

/* The two sides an incident follows per route: runtime tokens and requests per
 * minute, mantle input and output (k = 0, 1). */
enum bt_side bt_inc_side(bool mantle, int k);
/* bt_data_minute, the data minute on screen at time t: core/dataminute.h (the one clock) */
/* Evaluates every route of the recording at each data minute from..to (as bedtop
 * showed it when that minute was the newest complete one: the same evaluation as
 * export) and derives the summary, the timeline and the ranked causes. keep
 * (NULL: all) limits the routes considered. Leaves the replay seeked to its end. */
void bt_incident_build(const struct bt_replay *rp, int64_t from, int64_t to, const bool *keep,
                       struct bt_incident *out);
void bt_incident_free(struct bt_incident *inc);
static inline const struct bt_inc_point *bt_inc_at(const struct bt_incident *inc, int r, int i)
{
    return &inc->pt[(size_t)r * (size_t)inc->n + (size_t)i];
}
/* Whether route r's minute m without a datapoint of sig is idle (0), not unknown: the
 * one rule of the incident report and of the quota request's coverage counts
 * (core/incidentcalc.c says it in full); core's own, not for views. */
bool bt_inc_unseen_idle(const struct bt_store *st, int r, enum bt_signal sig, int64_t m,
                        bool polled_ok);
#endif
