/* The event loop's signal wake-up (issue 16, break 10: "signals can wait a whole interval").
 * A signal that lands after the loop checked its flags but before it waits used to sleep
 * through the whole wait (60 s in headless record). The window is made deterministic here:
 * a task's tick() raises SIGTERM itself, i.e. exactly between the flag check and the
 * wait, while the next tick is an hour away. The loop must return the signal, not run into
 * the wait: it must come back before a generous 10 s bound (the wait it would otherwise
 * sleep through is the hour until the next tick, cut to the 10 s bound). */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "net/http.h"
#include "net/loop.h"
#include "tests/tap.h"

struct probe {
    int ticks;
    int64_t due;
};

static void p_tick(void *self, int64_t now)
{
    struct probe *p = self;
    p->ticks++;
    p->due = now + 3600;
    raise(SIGTERM); /* the handler runs now: after the flag check, before the wait */
}

static int64_t p_next_due(void *self)
{
    return ((struct probe *)self)->due;
}

static bool p_busy(void *self)
{
    (void)self;
    return false;
}


static bool woke_early;

static int run_once(struct bt_http *h, struct probe *p)
{
    static const struct bt_loop_task tasks[] = {
        {.tick = p_tick, .next_due = p_next_due, .busy = p_busy},
    };
    void *inst[1] = {p};
    struct bt_loop l;
    memset(&l, 0, sizeof l);
    l.http = h;
    l.tasks = tasks;
    l.inst = inst;
    l.n = 1;
    l.forever = true;                       /* headless record: only a signal ends it */
    bt_clock_start(&l.clock, (double)time(NULL), 1);
    l.deadline = bt_wall_now() + 10;        /* the bound: reaching it means the wake-up was lost */
    bt_loop_quit_signal = 0;
    int rc = bt_loop_run(&l);
    woke_early = bt_wall_now() < l.deadline;
    return rc;
}

int main(void)
{
    bt_loop_signals();
    OK(bt_loop_wake_fd() >= 0, "loop: the signal self-pipe exists after bt_loop_signals");

    struct probe p = {0, 0};
    int rc = run_once(NULL, &p);
    OK(rc == SIGTERM && p.ticks == 1 && woke_early,
       "loop (poll, no HTTP): SIGTERM between the flag check and the wait ends the wait (rc %d, ticks %d%s)",
       rc, p.ticks, woke_early ? "" : ", slept until the bound");

    struct bt_http *h = bt_http_new(0);
    OK(h != NULL, "loop: libcurl multi handle");
    memset(&p, 0, sizeof p);
    rc = run_once(h, &p);
    OK(rc == SIGTERM && p.ticks == 1 && woke_early,
       "loop (curl_multi_poll): SIGTERM between the flag check and the wait ends the wait (rc %d, ticks %d%s)",
       rc, p.ticks, woke_early ? "" : ", slept until the bound");

    bt_http_free(h);
    return tap_done();
}
