/* The single event loop (DESIGN.md "One thread, one loop"): collectors tick
 * when due, the HTTP layer's curl_multi_poll waits on the sockets, the
 * keyboard and the next deadline; signal handlers only set flags. Views plug
 * in through struct bt_loop_view, so this file knows nothing of curses. */
#ifndef BEDTOP_LOOP_H
#define BEDTOP_LOOP_H
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

struct bt_http;

/* Simulated (demo), recorded (replay) or real time. */
struct bt_clock {
    double speed;              /* simulated seconds per real second */
    double wall0;              /* real time at sim0 */
    double sim0;
    bool frozen;               /* paused: time stands still */
    bool stepped;              /* unpaced (speed "max"): time moves only by jumps to
                                * the next thing due, so a run is the same on an idle
                                * or a loaded machine */
};
double bt_wall_now(void);      /* CLOCK_REALTIME, fractional seconds */
double bt_clock_nowf(const struct bt_clock *c);
int64_t bt_clock_now(const struct bt_clock *c);
void bt_clock_start(struct bt_clock *c, double sim_now, double speed);
void bt_clock_freeze(struct bt_clock *c, bool frozen);
void bt_clock_set_speed(struct bt_clock *c, double speed);
void bt_clock_jump(struct bt_clock *c, double sim_now);

struct bt_loop_view {
    void *self;
    int input_fd;                            /* -1: none */
    void (*on_input)(void *self);
    void (*on_update)(void *self, int64_t now); /* after every wake: redraw if needed */
    void (*on_resize)(void *self);
    bool (*done)(void *self);
    int (*next_wakeup_ms)(void *self);       /* -1: none */
};

/* What the loop drives of each source: its timing, nothing else (app/ fills these from
 * the collectors of collectors/collector.h). */
struct bt_loop_task {
    void (*tick)(void *self, int64_t now);      /* start what is due; must not block */
    int64_t (*next_due)(void *self);            /* epoch s of the next tick wanted */
    bool (*busy)(void *self);                   /* requests in flight or work still owed */
};

struct bt_loop {
    struct bt_http *http;      /* the client whose curl_multi_poll the loop waits in; NULL none */
    const struct bt_loop_task *tasks;
    void **inst;               /* inst[i] runs tasks[i]; NULL: stopped */
    int n;
    struct bt_clock clock;
    bool paused;               /* collectors not ticked, clock frozen */
    bool refresh;              /* tick every collector at the next wake */
    struct bt_loop_view *view;
    /* After collectors ran (e.g. the recording writer); may be NULL. */
    void (*after_tick)(void *arg, int64_t now);
    void *after_tick_arg;
    int exit_signal;           /* the signal that ended the loop, 0 none */
    double deadline;           /* wall time after which run() gives up (-2), 0 none */
    bool forever;              /* no view: run until a signal (headless recording) */
    int64_t until;             /* simulated time at which run() returns 0, 0 none */
    bool started;              /* run before: run() again goes on (serve after a SIGHUP)
                                * rather than ticking every collector at the start time */
};

/* Installs SIGINT/SIGTERM/SIGHUP/SIGWINCH handlers (no SA_RESTART so waits return). Each
 * handler also writes to a self-pipe that bt_loop_run waits on (inside curl_multi_poll), so
 * a signal arriving just before the wait does not wait out the interval. */
void bt_loop_signals(void);
int bt_loop_wake_fd(void);     /* the self-pipe's read end (-1 before bt_loop_signals) */
extern volatile sig_atomic_t bt_loop_quit_signal;
extern volatile sig_atomic_t bt_loop_winch;

/* Start-up waits outside the loop (route discovery): polls http until done(arg), no
 * request is pending, or a quit signal arrives, which ends the wait at once rather than
 * after the requests' own timeouts and retries (the self-pipe wakes the poll; call
 * bt_loop_signals first). Returns 0, or the signal number; the caller then cancels its
 * callbacks (bt_http_cancel), whose argument is usually on its stack. */
int bt_loop_wait_http(struct bt_http *http, bool (*done)(void *arg), void *arg);

/* Runs until the view is done, a quit signal arrives, or (no view) no collector
 * is busy any more (once mode). Returns 0, or the signal number. */
int bt_loop_run(struct bt_loop *l);
/* The next time (sim seconds) a collector wants a tick. */
int64_t bt_loop_next_due(const struct bt_loop *l);
#endif
