/* The collector skeleton (collectors/skeleton.h). */
#include "collectors/skeleton.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"

void *bt_collector_base_init(struct bt_collector_base *b, const struct bt_collector_kind *kind,
                             const struct bt_ctx *ctx)
{
    b->kind = kind;
    b->mode = ctx->mode;
    if (kind->service)
        bt_awsgroups_build(&b->ag, ctx, kind->service, kind->runtime_only);
    if (!kind->group_size)
        return NULL; /* grouped routes at most (b->ag), no struct per group */
    b->ngroups = b->ag.n;
    b->groups = bt_xcalloc((size_t)(b->ngroups ? b->ngroups : 1), kind->group_size);
    for (int i = 0; i < b->ngroups; i++) {
        char *g = (char *)b->groups + (size_t)i * kind->group_size;
        struct bt_awsgroup *ag = &b->ag.g[i];
        memcpy(g + kind->group_ag, &ag, sizeof ag);
        snprintf(g + kind->group_label, kind->group_label_size, "%s %s", kind->label,
                 ag->region[0] ? ag->region : "(no region)");
    }
    return b->groups;
}

static bool groups_busy(const struct bt_collector_base *b)
{
    const char *g = b->groups;
    if (b->kind->busy)
        return b->kind->busy((void *)b);
    for (int i = 0; i < b->ngroups; i++)
        if (*(const bool *)(g + (size_t)i * b->kind->group_size + b->kind->group_busy))
            return true;
    return false;
}

int64_t bt_collector_next_due(void *self)
{
    const struct bt_collector_base *b = self;
    if (b->mode == BT_MODE_ONCE)
        return b->started ? INT64_MAX : b->next;
    /* a failed round is retried soon; what it reads rarely changes */
    if (b->failed && b->retry_at && !groups_busy(b))
        return b->retry_at;
    return b->next;
}

bool bt_collector_round_due(struct bt_collector_base *b, int64_t now, int64_t every)
{
    if ((b->mode == BT_MODE_ONCE && b->started) || now < b->next)
        return false;
    b->started = true;
    b->next = now + every;
    return true;
}

bool bt_collector_busy(void *self)
{
    const struct bt_collector_base *b = self;
    if (b->mode == BT_MODE_ONCE && !b->started)
        return true;
    return groups_busy(b);
}

void bt_collector_destroy(void *self)
{
    struct bt_collector_base *b = self;
    if (!b)
        return;
    char *g = b->groups;
    for (int i = 0; b->kind->free_group && g && i < b->ngroups; i++)
        b->kind->free_group(g + (size_t)i * b->kind->group_size);
    free(b->groups);
    if (b->kind->free_self)
        b->kind->free_self(self);
    bt_awsgroups_free(&b->ag);
    free(self);
}
