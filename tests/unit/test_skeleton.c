/* The collector skeleton (collectors/skeleton.c): next_due, busy and destroy of every
 * AWS collector, written once. The collectors' own suites run it against the fake
 * AWS; here its rules are read on a kind of two groups with no routes. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "collectors/skeleton.h"
#include "core/util.h"
#include "tests/tap.h"

struct tgroup {
    struct bt_awsgroup *ag;
    char label[96];
    bool out;
    char *held;
};

struct tinst {
    struct bt_collector_base b;
};

static int freed_groups, freed_self;

static void t_free_group(void *group)
{
    struct tgroup *g = group;
    free(g->held);
    freed_groups++;
}

static void t_free(void *self)
{
    (void)self;
    freed_self++;
}

static const struct bt_collector_kind t_kind = {
    .service = "monitoring", .label = "test",
    BT_COLLECTOR_GROUPS(struct tgroup, ag, label, out),
    .free_group = t_free_group, .free_self = t_free,
};

static struct tinst *make(enum bt_run_mode mode)
{
    struct tinst *t = bt_xcalloc(1, sizeof *t);
    t->b.kind = &t_kind;
    t->b.mode = mode;
    t->b.ngroups = 2;
    t->b.groups = bt_xcalloc(2, sizeof(struct tgroup));
    ((struct tgroup *)t->b.groups)[1].held = bt_xstrdup("x");
    return t;
}

int main(void)
{
    {
        struct tinst *t = make(BT_MODE_ONCE);
        struct tgroup *g = t->b.groups;
        OK(bt_collector_next_due(t) == 0 && bt_collector_busy(t),
           "check mode: due at once and busy before its round began");
        t->b.started = true;
        g[1].out = true;
        OK(bt_collector_next_due(t) == INT64_MAX && bt_collector_busy(t),
           "check mode: never due again; busy while the second group's round is out");
        g[1].out = false;
        OK(!bt_collector_busy(t), "and idle once every group is in");
        bt_collector_destroy(t);
        OK(freed_groups == 2 && freed_self == 1, "destroy frees each group and the rest once");
    }
    {
        struct tinst *t = make(BT_MODE_LIVE);
        struct tgroup *g = t->b.groups;
        t->b.started = true;
        t->b.next = 1000 + 21600;
        t->b.retry_at = 1000 + 300;
        OK(bt_collector_next_due(t) == 21600 + 1000, "live: the next round");
        t->b.failed = true;
        g[0].out = true;
        OK(bt_collector_next_due(t) == 21600 + 1000,
           "a failed round is not retried while a group is still out");
        g[0].out = false;
        OK(bt_collector_next_due(t) == 1300, "then at its retry (300 s after the round began)");
        OK(!bt_collector_busy(t), "live: not busy with nothing out");
        bt_collector_destroy(t);
    }
    {
        /* a round every 600 s: check mode's one round, live's at or past next */
        struct tinst *t = make(BT_MODE_ONCE);
        OK(bt_collector_round_due(&t->b, 1000, 600) && t->b.started && t->b.next == 1600,
           "check mode: the first tick starts its round (next 1000 + 600)");
        OK(!bt_collector_round_due(&t->b, 5000, 600) && t->b.next == 1600,
           "check mode: no second round, however late");
        bt_collector_destroy(t);
        t = make(BT_MODE_LIVE);
        OK(bt_collector_round_due(&t->b, 1000, 600) && t->b.next == 1600,
           "live: due at once (next 0)");
        OK(!bt_collector_round_due(&t->b, 1599, 600) && t->b.next == 1600,
           "live: not due a second before next");
        OK(bt_collector_round_due(&t->b, 1600, 600) && t->b.next == 2200,
           "live: due at next; the one after 600 s on (2200)");
        bt_collector_destroy(t);
    }
    bt_collector_destroy(NULL);
    OK(true, "destroy(NULL) is nothing");
    return tap_done();
}
