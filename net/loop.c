#include "net/loop.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "net/http.h"

volatile sig_atomic_t bt_loop_quit_signal;
volatile sig_atomic_t bt_loop_winch;

double bt_wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

double bt_clock_nowf(const struct bt_clock *c)
{
    if (c->frozen || c->stepped)
        return c->sim0;
    return c->sim0 + (bt_wall_now() - c->wall0) * c->speed;
}

int64_t bt_clock_now(const struct bt_clock *c)
{
    return (int64_t)floor(bt_clock_nowf(c));
}

void bt_clock_start(struct bt_clock *c, double sim_now, double speed)
{
    c->stepped = isinf(speed) && speed > 0;
    c->speed = c->stepped ? 1 : speed > 0 ? speed : 1;
    c->sim0 = sim_now;
    c->wall0 = bt_wall_now();
    c->frozen = false;
}

void bt_clock_freeze(struct bt_clock *c, bool frozen)
{
    if (frozen == c->frozen)
        return;
    double now = bt_clock_nowf(c);
    c->frozen = frozen;
    c->sim0 = now;
    c->wall0 = bt_wall_now();
}

void bt_clock_set_speed(struct bt_clock *c, double speed)
{
    double now = bt_clock_nowf(c);
    c->sim0 = now;
    c->wall0 = bt_wall_now();
    c->speed = speed > 0 ? speed : 1;
}

void bt_clock_jump(struct bt_clock *c, double sim_now)
{
    c->sim0 = sim_now;
    c->wall0 = bt_wall_now();
}

/* The self-pipe (as tmux and redis do): a handler writes one byte so a signal that lands
 * between the flag check and the wait still ends the wait at once. */
static int wake_pipe[2] = {-1, -1};

static void wake(void)
{
    int saved = errno;
    if (wake_pipe[1] >= 0) {
        ssize_t r = write(wake_pipe[1], "x", 1);
        (void)r; /* a full pipe already holds a wake-up */
    }
    errno = saved;
}

static void on_quit(int sig)
{
    /* a SIGHUP (serve's reload) never hides a pending SIGINT or SIGTERM */
    if (sig != SIGHUP || !bt_loop_quit_signal)
        bt_loop_quit_signal = sig;
    wake();
}

static void on_winch(int sig)
{
    (void)sig;
    bt_loop_winch = 1;
    wake();
}

int bt_loop_wake_fd(void)
{
    return wake_pipe[0];
}

static void drain_wake(void)
{
    char buf[64];
    while (wake_pipe[0] >= 0 && read(wake_pipe[0], buf, sizeof buf) > 0)
        ;
}

static void on_wake(void *arg, int fd, bool timed_out)
{
    (void)arg;
    (void)fd;
    (void)timed_out;
    drain_wake();
}

void bt_loop_signals(void)
{
    if (wake_pipe[0] < 0 && pipe(wake_pipe) == 0) {
        for (int i = 0; i < 2; i++) {
            fcntl(wake_pipe[i], F_SETFL, fcntl(wake_pipe[i], F_GETFL) | O_NONBLOCK);
            fcntl(wake_pipe[i], F_SETFD, FD_CLOEXEC);
        }
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = on_quit;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sa.sa_handler = on_winch;
    sigaction(SIGWINCH, &sa, NULL);
    sa.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &sa, NULL);
    /* a file-size limit reached while recording is a write error to report, not death */
    sigaction(SIGXFSZ, &sa, NULL);
}

int bt_loop_wait_http(struct bt_http *http, bool (*done)(void *arg), void *arg)
{
    while (!done(arg) && !bt_loop_quit_signal && bt_http_pending(http) > 0) {
        bool woke = false;
        if (bt_http_poll(http, 1000, wake_pipe[0], &woke) < 0)
            break;
        if (woke)
            drain_wake(); /* a SIGWINCH's byte: its flag stays for the loop */
    }
    return bt_loop_quit_signal;
}

int64_t bt_loop_next_due(const struct bt_loop *l)
{
    int64_t due = INT64_MAX;
    for (int i = 0; i < l->n; i++) {
        if (!l->inst[i])
            continue;
        int64_t d = l->tasks[i].next_due(l->inst[i]);
        if (d < due)
            due = d;
    }
    return due;
}

static bool any_busy(const struct bt_loop *l)
{
    for (int i = 0; i < l->n; i++)
        if (l->inst[i] && l->tasks[i].busy(l->inst[i]))
            return true;
    return l->http && bt_http_pending(l->http) > 0;
}

static void tick_due(struct bt_loop *l, int64_t now, bool force)
{
    for (int i = 0; i < l->n; i++) {
        if (!l->inst[i])
            continue;
        if (force || l->tasks[i].next_due(l->inst[i]) <= now)
            l->tasks[i].tick(l->inst[i], now);
    }
    if (l->after_tick)
        l->after_tick(l->after_tick_arg, now);
}

/* Milliseconds of real time until the next thing to do. */
static int wait_ms(struct bt_loop *l, int64_t now)
{
    long ms = 60000;
    if (!l->paused) {
        int64_t due = bt_loop_next_due(l);
        if (due != INT64_MAX) {
            double sim = (double)due - bt_clock_nowf(&l->clock);
            double real = sim / (l->clock.speed > 0 ? l->clock.speed : 1);
            long d = real <= 0 ? 0 : (long)ceil(real * 1000);
            if (d < ms)
                ms = d;
        }
    }
    if (l->view && l->view->next_wakeup_ms) {
        int v = l->view->next_wakeup_ms(l->view->self);
        if (v >= 0 && v < ms)
            ms = v;
    }
    if (l->until) {
        double left = ((double)l->until - bt_clock_nowf(&l->clock)) /
                      (l->clock.speed > 0 ? l->clock.speed : 1) * 1000;
        if (left < ms)
            ms = left < 0 ? 0 : (long)ceil(left);
    }
    (void)now;
    if (l->deadline > 0) {
        double left = (l->deadline - bt_wall_now()) * 1000;
        if (left < ms)
            ms = left < 0 ? 0 : (long)ceil(left);
    }
    return (int)ms;
}

static int loop_run(struct bt_loop *l);

int bt_loop_run(struct bt_loop *l)
{
    bool watched = l->http && wake_pipe[0] >= 0 &&
                   bt_http_watch(l->http, wake_pipe[0], 0, on_wake, l) == 0;
    int rc = loop_run(l);
    if (watched)
        bt_http_unwatch(l->http, wake_pipe[0], l);
    return rc;
}

static int loop_run(struct bt_loop *l)
{
    bool first = !l->started;
    l->started = true;
    for (;;) {
        if (bt_loop_quit_signal) {
            l->exit_signal = bt_loop_quit_signal;
            return l->exit_signal;
        }
        if (bt_loop_winch) {
            bt_loop_winch = 0;
            if (l->view && l->view->on_resize)
                l->view->on_resize(l->view->self);
        }
        if (l->deadline > 0 && bt_wall_now() > l->deadline)
            return -2;
        /* the first tick happens at the start time exactly (deterministic demo recordings) */
        int64_t now = first ? (int64_t)floor(l->clock.sim0) : bt_clock_now(&l->clock);
        /* A late wake-up (a loaded machine, an accelerated clock) must not poll past the
         * end: the last tick is at `until` exactly, as on an idle machine. */
        if (l->until && now > l->until)
            now = l->until;
        if (!l->paused || l->refresh || first) {
            tick_due(l, now, l->refresh || first);
            l->refresh = false;
            first = false;
        }
        if (l->until && now >= l->until)
            return 0;
        if (l->clock.stepped && !l->paused) {
            /* unpaced: go straight to the next thing due (or the end) instead of waiting */
            int64_t due = bt_loop_next_due(l);
            if (l->until && (due == INT64_MAX || due > l->until))
                due = l->until;
            if (due != INT64_MAX && due > now)
                bt_clock_jump(&l->clock, (double)due);
        }
        if (l->view) {
            l->view->on_update(l->view->self, now);
            if (l->view->done(l->view->self))
                return 0;
        } else if (!l->forever && !any_busy(l)) {
            return 0;
        }
        int ms = wait_ms(l, now);
        int fd = l->view ? l->view->input_fd : -1;
        bool ready = false;
        if (l->http) {
            if (bt_http_poll(l->http, ms, fd, &ready) < 0) {
                struct pollfd p = {.fd = fd, .events = POLLIN};
                if (poll(&p, fd >= 0 ? 1 : 0, ms > 100 ? 100 : ms) > 0)
                    ready = true;
            }
        } else {
            struct pollfd p[2] = {{.fd = fd, .events = POLLIN}, {.fd = wake_pipe[0], .events = POLLIN}};
            int r = poll(p, 2, ms);
            if (r > 0 && (p[0].revents & (POLLIN | POLLHUP | POLLERR)))
                ready = true;
            else if (r < 0 && errno != EINTR)
                return -1;
            if (r > 0 && p[1].revents)
                drain_wake();
        }
        if (ready && l->view && l->view->on_input)
            l->view->on_input(l->view->self);
    }
}
