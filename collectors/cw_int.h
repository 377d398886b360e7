/* Between the CloudWatch files (cw_wire.c, cw_page.c, cw_collect.c, cw_discover.c):
 * the protocol's constants. Not for other rooms.
 * Their layers, each calling only those below it: cw_collect.c (the collector) on
 * top; cw_list.c (ListMetrics) and cw_query.c (a poll's queries) under it, neither
 * calling the other (what cw_list.c needs of the collector is handed to it:
 * cw->listed, and cw_submit here); cw_sets.c, then cw_wire.c and cw_page.c (the wire
 * format; neither calls the other) at the bottom. */
#ifndef BEDTOP_CW_INT_H
#define BEDTOP_CW_INT_H

#define NS_RUNTIME "AWS/Bedrock"
#define NS_MANTLE "AWS/BedrockMantle"
#define CW_TARGET "GraniteServiceVersion20100801."
#define CW_CTYPE "application/x-amz-json-1.0"
#define MAX_PAGES 1000       /* a pagination that never ends is an error */
#define MAX_TOKEN_LEN 4096   /* bound on a NextToken we echo back */

#include "collectors/cloudwatch.h"

/* The series a route's figures are read from, as ListMetrics lists them
 * (cw_sets.c), one metric at a time: a mantle model's token totals exist per Model,
 * or only per Model+Project (then summed over every listed project: no cap; a wrong
 * set returns zeros, not an error), and each signal is asked with its own metric's
 * sets (the per-inference OutputTokens listed per Model says nothing of
 * TotalOutputTokens); an application inference profile appears under its ARN and its
 * bare ID (both summed); the reserved service tier under any set that holds
 * ResolvedServiceTier=reserved (ModelId + ResolvedServiceTier, or with ServiceTier
 * too: summed over the other dimensions). */
struct cw_set {                /* one listed set's dimensions besides the model's */
    int n;
    char name[BT_CW_MAX_DIMS][32];
    char value[BT_CW_MAX_DIMS][96];
};
struct cw_metric_sets {
    bool model_only;         /* listed under the model dimension alone */
    int nset, capset;
    struct cw_set *set;      /* listed with more dimensions (Project; the tier's) */
    struct bt_cw_dimset *dims; /* what is asked (cw_sets_apply): into set[] and the model */
    int ndims;
    char key[48];            /* tells routes with the same model but other sets apart */
};
#define CW_SETS_MANTLE 4     /* Inferences, TotalInputTokens, TotalOutputTokens, InferenceClientErrors */
#define CW_SETS_TIER 3       /* the reserved tier's Invocations, InputTokenCount, OutputTokenCount */
struct cw_sets {
    bool listed;             /* mantle: ListMetrics answered for the route's group */
    struct cw_metric_sets m[CW_SETS_MANTLE];
    struct cw_metric_sets tier[CW_SETS_TIER];
    struct bt_cw_dimset prof[2]; /* an application profile: its ARN and its bare ID */
    int nprof;
    char key[96];
    char bare_id[64];        /* an application profile's bare ID */
    bool tier_reserved;      /* ListMetrics lists a set with ResolvedServiceTier=reserved */
};
/* Frees what s holds and empties it (s must be zeroed or reset before). */
void cw_sets_reset(struct cw_sets *s);
/* Empties the mantle listing only (the reserved tier's sets stay). */
void cw_sets_reset_mantle(struct cw_sets *s);
/* dst takes src's mantle sets (mantle: true) or its tier sets; src's become empty. */
void cw_sets_take(struct cw_sets *dst, struct cw_sets *src, bool mantle);
/* A metric ListMetrics listed in AWS/BedrockMantle: the sets that carry rt's model. */
void cw_sets_note(struct cw_sets *s, const struct bt_route *rt, const struct bt_cw_listed *m);
/* A metric ListMetrics listed in AWS/Bedrock with ResolvedServiceTier=reserved for
 * rt's ModelId: a set of the reserved tier's. */
void cw_sets_note_tier(struct cw_sets *s, const struct bt_route *rt, const struct bt_cw_listed *m);
/* The reserved tier under ModelId + ResolvedServiceTier=reserved alone (what a state
 * file that lists no sets knows). */
void cw_sets_tier_pair(struct cw_sets *s);
/* Points a route's queries q[0..n) at the series to read, each signal at its own
 * metric's listed sets; a query whose signal has none listed is dropped (its figure
 * is unknown, not idle). Returns how many are kept (compacted at the front of q);
 * 0 with why set when none is (a mantle route with no series listed, or naming a
 * project that is not listed). */
int cw_sets_apply(struct cw_sets *s, const struct bt_route *rt, struct bt_cw_query *q, int n,
                  char *why, size_t whylen);
/* The reserved tier's queries (TIER_RES_*: every listed set with
 * ResolvedServiceTier=reserved) of a runtime route whose account lists them;
 * returns how many (at most max). */
int cw_sets_tier_queries(struct cw_sets *s, const struct bt_route *rt, int ri,
                         struct bt_cw_query *out, int max);
/* ---- the collector's state (cw_collect.c polls, cw_list.c lists) ---- */
#include <stdint.h>

#include "core/strmap.h"
#include "collectors/awsgroup.h"
#include "collectors/paginate.h"
#include "collectors/skeleton.h"
#include "net/http.h"

#define LIST_EVERY (6 * 3600)
#define LIST_RETRY 600       /* a failed ListMetrics is tried again after 10 minutes */
#define POLL_OFFSET 10       /* poll this long after the minute boundary */
#define ALT_READ "CacheReadInputTokens"
#define ALT_WRITE "CacheWriteInputTokens"

struct cw;
struct cw_group;

struct cw_chunk {
    struct cw_group *g;
    int first, count;        /* wire queries [first, first + count) of the group's poll */
    int64_t start, end;      /* the request's StartTime and EndTime */
    struct bt_pages pages;   /* its GetMetricData pages */
    double *daysum;          /* day sums: the hourly datapoints of wire first + i, summed */
    const char *id_at;       /* the page's last result Id seen, and its wire query */
    int id_w, id_s;
    bool *dayhas;            /* ... and whether any came */
    bool failed;             /* a day-sum request that failed (its routes stay good) */
};

struct cw_group {
    struct cw *cw;
    struct bt_awsgroup *ag;
    char label[96];          /* "cloudwatch us-east-1" */
    struct bt_cw_query *q;   /* every route's queries */
    int nq;
    int nq_min;              /* q[0, nq_min): per-minute queries; the rest: day sums (hourly, summed) */
    /* One poll's requests: each distinct (namespace, metric, dimensions, stat,
     * period, account) once, shared by every route that needs it. wire[w] is the
     * q index sent (its Id names it: q[wire[w]] is the query; a copy of each, kept
     * contiguous for the request body, was 27 MB of a 20,000-route check), member[mfirst[w]
     * .. + mcount[w]) the q indices it answers. */
    int *wire, *mfirst, *mcount, *member;
    int nwire, nwire_min;
    int nwire_recent;        /* [0, nwire_recent): per-minute ones from the last poll on;
                              * [nwire_recent, nwire_min): backfilling (detail, calm routes) */
    int nfast, ndetail;      /* distinct queries of each cadence (cost) */
    int nslow;               /* per-minute ones whose routes are all calm: every 5 minutes */
    int nday;                /* distinct day sums: every check; live, once an hour (cost) */
    int64_t day_through;     /* live: the hour the day sums stored run to (0: none yet) */
    bool day_failed;         /* a day-sum request of this poll failed: asked again next poll */
    int *kind;               /* per q index: which distinct query it is (0 .. nkinds) */
    int nkinds;
    bool detail_now;         /* this poll includes the detail queries */
    int64_t detail_at;       /* start of the last poll that did (0 never) */
    struct cw_chunk *chunks;
    int nchunks, outstanding;
    bool polling, listing, listed;
    int64_t listed_at;
    int64_t poll_now, poll_end;
    struct bt_pages list;    /* the ListMetrics pages */
    int list_phase;          /* 0: AWS/Bedrock (ModelId), 1: AWS/BedrockMantle (Model) */
    bool list_ok[2];
    bool has_mantle;         /* a mantle route is in the group */
    /* the listing's account scope (cw_list.c list_start), found once a listing: each
     * page's request was a pass over the group's routes (quadratic: pages grow with
     * routes too) */
    char list_owner[16];     /* every route's account when they name one and the same
                              * ("": not one, or none named) */
    bool list_linked;        /* a route names a source account */
    /* cw_list.c: the group's routes by model (the first index into ag->routes, then
     * model_next[i] the next of the same model, -1 the last), so a listed metric
     * finds its routes by one lookup, not a strcmp with every route */
    struct bt_strmap by_model;
    int *model_next;
};
/* Frees what cw_list.c keeps in a group (the model index). */
void cw_list_free(struct cw_group *g);

/* What ListMetrics showed for a route's model. */
enum { SEEN_READ = 1, SEEN_READ_ALT = 2, SEEN_WRITE = 4, SEEN_WRITE_ALT = 8, SEEN_LEGACY = 16,
       SEEN_TIER = 32 };

struct cw {
    struct bt_collector_base b; /* first: the skeleton's (next, started, the groups) */
    struct bt_ctx *ctx;
    struct cw_group *g;
    int ng;
    int nroutes;
    int64_t *settled;        /* per route: newest settled minute fetched (0 none) */
    int64_t *settled_detail; /* the same for the detail queries, fetched less often */
    int64_t *settled_throttle; /* the same for InvocationThrottles, asked every poll */
    /* adaptive cadence (core/cadence.h), per route: calm (its per-minute signals every
     * BT_CADENCE_SLOW_S), its per-minute signals in the running poll, their last poll */
    bool *slow, *due;
    bool resumed;            /* check: a state file gave the settled minutes below */
    int64_t *minute_at;
    int64_t *listed_at;      /* per route: its group's last good AWS/Bedrock listing */
    bool adaptive;           /* the adaptive cadence decides which routes are polled */
    struct bt_cw_spelling *spell;
    unsigned *seen;
    struct cw_sets *sets;    /* per route: the series its figures are read from */
    struct cw_sets *listing; /* per route: what the running mantle listing shows */
    char (*nodata)[224];     /* per route: why no series is listed for it ("" none) */
    char (*err)[224];        /* per route: first failure of the running poll */
    int *group_of;           /* per route: group index, -1 none */
    int *wire_of;            /* per (route, signal, alt) of a sent Id: its wire index */
    int64_t tick_now, tick_wall; /* the tick's clock and the wall clock then: events are
                                  * stamped tick_now + the time since (tests simulate it) */
    unsigned long requests;
    /* A group's listing is over (cw_list.c calls it): what comes next, the
     * collector's (cw_collect.c: the queries built anew, then the poll at now) */
    void (*listed)(struct cw_group *g, int64_t now);
};

/* What AWS bills for a wire query: each metric requested, so a summed figure costs
 * every series it sums (the expression itself is not a metric). */
static inline unsigned cw_billed(const struct bt_cw_query *x)
{
    return x->nsum > 1 ? (unsigned)x->nsum : 1;
}

/* The slot of cw->wire_of for a (route, signal, spelling). */
static inline int cw_wire_slot(int route, int sig, bool alt)
{
    return (route * BT_SIG_COUNT + sig) * 2 + (alt ? 1 : 0);
}
/* One CloudWatch request of the group's (ListMetrics, GetMetricData), counted: what
 * cw_collect.c and cw_list.c send through, here so neither calls the other for it.
 * body NULL: body_fn(body_arg, out) writes it when the request starts. */
static inline void cw_submit(struct cw_group *g, const char *op, const struct bt_buf *body,
                             void (*body_fn)(void *body_arg, struct bt_buf *out),
                             void *body_arg, bt_http_cb cb, void *arg)
{
    struct cw *cw = g->cw;
    cw->requests++;
    bt_awsgroup_submit(&cw->b.ag, g->ag, cw->ctx->http, "monitoring", CW_TARGET, CW_CTYPE,
                       g->label, op, body, body_fn, body_arg, cb, arg);
}
/* cw_query.c: the queries of a poll */
void cw_build_queries(struct cw_group *g);
/* Frees what cw_build_queries made of the query set (the kinds and the wire arrays). */
void cw_free_queries(struct cw_group *g);
/* This poll's wire queries (detail: the 5-minute tier is due; all: every query, the
 * first poll or a backfill). */
void cw_build_wire(struct cw_group *g, bool detail, bool all);
void cw_count_cost(struct cw_group *g);
/* cw_list.c: ListMetrics (phase 0: AWS/Bedrock then, with mantle routes, AWS/BedrockMantle;
 * phase 1: only AWS/BedrockMantle), then cw->listed (the collector's: the poll) */
void cw_start_list(struct cw_group *g, int64_t now, int phase);
/* The spellings and series ListMetrics showed (cw->seen[r]), applied to route r. */
void cw_apply_seen(struct cw *cw, int r);
#endif
