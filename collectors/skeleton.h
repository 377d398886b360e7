/* The collector skeleton: busy, next_due and destroy, written once for every
 * collector. Most poll AWS in rounds per (profile, Region) group (cloudwatch,
 * quotas, Metrics Insights, the catalogue, pricing); the tags collector groups its
 * routes but keeps no struct per group; admission, promsource and the demo ask no
 * AWS service at all. A collector's instance begins with struct bt_collector_base,
 * says in a struct bt_collector_kind where its groups' "round out" flag is (or how
 * it knows work is out) and what it frees, and lists bt_collector_next_due,
 * bt_collector_busy and bt_collector_destroy in its struct bt_collector_ops
 * (BT_COLLECTOR_SKELETON). */
#ifndef BEDTOP_SKELETON_H
#define BEDTOP_SKELETON_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "collectors/awsgroup.h"
#include "collectors/collector.h"

struct bt_collector_kind {
    /* the groups: one per (profile, Region) of the routes, for this AWS service */
    const char *service;             /* "monitoring", "servicequotas", "bedrock";
                                      * NULL: the routes are not grouped (no AWS) */
    bool runtime_only;               /* only runtime routes (not mantle) */
    const char *label;               /* a group is labelled "<label> <Region>" */
    size_t group_size;               /* bytes of one group (0: no struct per group) */
    size_t group_ag;                 /* offsetof its struct bt_awsgroup * */
    size_t group_label;              /* offsetof its char label[group_label_size] */
    size_t group_label_size;
    size_t group_busy;               /* offsetof the group's bool: its round is out */
    void (*free_group)(void *group); /* what one group holds (NULL: nothing) */
    void (*free_self)(void *self);   /* what the instance holds besides its groups (NULL: nothing) */
    bool (*busy)(void *self);        /* whether work is out, instead of the groups' flag
                                      * (NULL: the flag) */
};

/* The group fields of a kind: BT_COLLECTOR_GROUPS(struct x_group, ag, label, running). */
#define BT_COLLECTOR_GROUPS(type, ag_field, label_field, busy_field)                          \
    .group_size = sizeof(type), .group_ag = offsetof(type, ag_field),                         \
    .group_label = offsetof(type, label_field),                                               \
    .group_label_size = sizeof(((type *)0)->label_field), .group_busy = offsetof(type, busy_field)

struct bt_collector_base {
    const struct bt_collector_kind *kind;
    enum bt_run_mode mode;
    struct bt_awsgroups ag;          /* the routes grouped, with their credentials */
    void *groups;                    /* ngroups of kind->group_size bytes, freed by destroy */
    int ngroups;
    int64_t next;                    /* live: when the next round is due (epoch s) */
    int64_t retry_at;                /* a failed round is tried again then, once nothing is out
                                      * (0: at next) */
    bool started;                    /* check mode: no further tick is wanted (a round
                                      * began: its only one; a collector of several
                                      * rounds or steps sets it once the last is out) */
    bool failed;                     /* the last round failed somewhere */
};

/* The collector's ops: its name, create and tick; the rest is the skeleton's. */
#define BT_COLLECTOR_SKELETON(name_, create_, tick_, iam_)                                    \
    {                                                                                         \
        .name = (name_), .create = (create_), .tick = (tick_),                                \
        .next_due = bt_collector_next_due, .busy = bt_collector_busy,                         \
        .destroy = bt_collector_destroy, .iam = (iam_),                                       \
    }

/* The base of an instance: its kind, mode, the routes grouped and a group each (calloc'd,
 * at least one; each pointing at its bt_awsgroup, labelled). Returns the groups (NULL
 * for a kind without a struct per group). */
void *bt_collector_base_init(struct bt_collector_base *b, const struct bt_collector_kind *kind,
                             const struct bt_ctx *ctx);
/* Check mode: never once started, else at next (0 until a tick set it: at once); live:
 * the next round, or the retry of a failed one. */
int64_t bt_collector_next_due(void *self);
/* Whether a kind that runs a round every `every` seconds is due at now (check mode:
 * its one round, not yet started; live: now at or past next); when it is, marks the
 * round started and sets the next one. A kind that retries a failed round before next
 * (retry_at) or steps through several rounds decides for itself. */
bool bt_collector_round_due(struct bt_collector_base *b, int64_t now, int64_t every);
/* Check mode: busy until started; then, and live, while a group's round is out (the
 * kind's busy, else the groups' flag; neither: never). */
bool bt_collector_busy(void *self);
/* Frees every group (kind->free_group), the groups, the rest (kind->free_self), the
 * grouping, self. */
void bt_collector_destroy(void *self);
#endif
