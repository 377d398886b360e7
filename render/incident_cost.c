/* "What this incident cost": report incident's spend section (core/cost.h). */
#include "render/incident_cost.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/cost.h"
#include "core/dataminute.h"
#include "core/format.h"
#include "core/ledger.h"
#include "core/sanitize.h"
#include "render/spend.h"

struct spent {
    int route;
    double usd, peak;
    int minutes;
};

static int cmp_spent(const void *a, const void *b)
{
    const struct spent *x = a, *y = b;
    if (x->usd != y->usd)
        return x->usd < y->usd ? 1 : -1;
    return x->route - y->route;
}

static void md_cell(struct bt_buf *b, const char *s)
{
    bt_san_md_buf(b, s);
}

/* The cross-model day at the incident's last minute (core/ledger.h): per Region the
 * day's settled tokens against the account-wide quota, and its observed ceiling (the
 * first minute every called route throttled far below its per-minute quota). */
static void ledger_md(const struct bt_incident *inc, const struct bt_replay *rp, struct bt_buf *b)
{
    const struct bt_config *cfg = &rp->cfg;
    if (!cfg->nroutes)
        return;
    struct bt_eval *evals = bt_xcalloc((size_t)cfg->nroutes, sizeof *evals);
    bt_eval_all(cfg, &rp->store, bt_replay_minute_instant(rp, inc->to), evals);
    struct bt_ledger *ls = NULL;
    int nl = bt_ledger_build(cfg, &rp->store, evals, &ls);
    for (int k = 0; k < nl; k++) {
        const struct bt_ledger *l = &ls[k];
        char t[16], q[16];
        bt_fmt_tokens(l->tokens_today, t, sizeof t);
        bt_fmt_tokens(l->quota, q, sizeof q);
        const char *lb = l->used_q == BT_QL_LOWER ? "at least " : "";
        bt_buf_puts(b, "Cross-model day in ");
        bt_san_md_buf(b, l->region);
        if (l->who[0]) { /* two accounts (or profiles) in the Region */
            bt_buf_puts(b, " of ");
            bt_san_md_buf(b, l->who);
        }
        if (isnan(l->quota))
            bt_buf_printf(b, ": %s%s settled tokens by the incident's end", lb, t);
        else
            bt_buf_printf(b, ": %s%s of %s tokens (%.1f%%, an estimate: AWS weights them by "
                             "price) by the incident's end", lb, t, q, l->pct);
        if (l->used_q == BT_QL_LOWER && l->used_why[0]) {
            bt_buf_puts(b, ", a lower bound: ");
            bt_san_md_buf(b, l->used_why);
        }
        if (isnan(l->quota))
            bt_buf_puts(b, "; no Cross-Model Max Tokens Per Day listed");
        if (l->onset) {
            char on[8], c[16];
            bt_fmt_hhmm(l->onset, on, sizeof on);
            bt_fmt_tokens(l->ceiling, c, sizeof c);
            bt_buf_printf(b, "; observed ceiling %s tokens: from %s UTC every called route "
                             "throttled under half its per-minute quota (\"Too many tokens per "
                             "day\")", c, on);
        }
        bt_buf_puts(b, ".\n\n");
    }
    bt_ledger_free(ls, nl);
    free(evals);
}

void bt_incident_cost_md(const struct bt_incident *inc, const struct bt_replay *rp,
                         struct bt_buf *b)
{
    const struct bt_config *cfg = &rp->cfg;
    struct spent *sp = bt_xcalloc((size_t)(inc->nroutes ? inc->nroutes : 1), sizeof *sp);
    int n = 0, unpriced = 0, unread = 0;
    double total = 0;
    for (int r = 0; r < inc->nroutes && r < cfg->nroutes; r++) {
        if (!inc->shown[r])
            continue;
        char why[192];
        struct spent s = {.route = r};
        s.usd = bt_cost_window(cfg, &rp->store, r, inc->from, inc->to, &s.peak, &s.minutes, why,
                               sizeof why);
        if (isnan(s.usd)) {
            unpriced++;
            continue;
        }
        if (!s.minutes) {
            unread++; /* no token count in the window: nothing to price, not $0 */
            continue;
        }
        total += s.usd;
        sp[n++] = s;
    }
    qsort(sp, (size_t)n, sizeof *sp, cmp_spent);
    char t[32];
    bt_fmt_usd(total, t, sizeof t);
    bt_buf_puts(b, "\n## What this incident cost\n\n");
    bt_buf_printf(b, "%s%s over the %d data minutes at list prices (an estimate: no discounts or "
                     "credits; the tokens CloudWatch counted, each kind at its price)",
                  unpriced ? "At least " : "", t, inc->n);
    if (unpriced)
        bt_buf_printf(b, "; %d route%s without a price row %s not counted", unpriced,
                      unpriced == 1 ? "" : "s", unpriced == 1 ? "is" : "are");
    if (unread)
        bt_buf_printf(b, "; %d route%s had no token counts in the window", unread,
                      unread == 1 ? "" : "s");
    bt_buf_puts(b, ".\n\n");
    if (!n) {
        free(sp);
        ledger_md(inc, rp, b);
        return;
    }
    bt_buf_puts(b, "| route | model | tier | USD | peak USD/h | minutes read |\n"
                   "|---|---|---|---:|---:|---:|\n");
    for (int i = 0; i < n && i < 10; i++) {
        const struct bt_route *rt = &cfg->routes[sp[i].route];
        char u[32], pk[32];
        bt_fmt_usd(sp[i].usd, u, sizeof u);
        bt_fmt_usd(sp[i].peak, pk, sizeof pk);
        bt_buf_puts(b, "| ");
        md_cell(b, rt->name);
        bt_buf_puts(b, " | ");
        md_cell(b, rt->model);
        bt_buf_printf(b, " | %s | %s | %s | %d |\n", bt_tier_name((enum bt_tier)rt->tier), u, pk,
                      sp[i].minutes);
    }
    if (n > 10)
        bt_buf_printf(b, "\n%d more routes spent the rest.\n", n - 10);
    bt_buf_putc(b, '\n');
    free(sp);
    ledger_md(inc, rp, b);
}
