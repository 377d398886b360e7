/* Test driver for the dashboard until main.c wires it: the demo collector,
 * the real event loop (collectors/loop.c) and the TUI, frozen at a simulated
 * minute so screens are deterministic. It is also the wiring template for
 * main.c's cmd_dashboard. Usage: tuidrv [--demo-at M] [--ascii] [--no-color] [--theme N] */
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/demo.h"
#include "collectors/loop.h"
#include "core/config.h"
#include "tui/tui.h"

struct app {
    struct bt_loop loop;
    struct bt_tui_host host;
    struct bt_config cfg;
    struct bt_tui *tui;
};

static void refresh_now(void *arg)
{
    struct app *a = arg;
    a->loop.refresh = true;
}

static void set_paused(void *arg, bool paused)
{
    struct app *a = arg;
    a->loop.paused = paused;
    a->host.paused = paused;
    bt_clock_freeze(&a->loop.clock, paused);
}

static void set_interval(void *arg, double s)
{
    struct app *a = arg;
    a->host.interval = s;
    a->cfg.interval = s;
}

static void on_input(void *self)
{
    struct app *a = self;
    bt_tui_input(a->tui);
}

static void on_update(void *self, int64_t now)
{
    struct app *a = self;
    a->host.now = now;
    int64_t due = bt_loop_next_due(&a->loop);
    a->host.next_poll = due == INT64_MAX ? 0 : due;
    bt_tui_update(a->tui);
}

static void on_resize(void *self)
{
    struct app *a = self;
    bt_tui_resize(a->tui);
}

static bool done(void *self)
{
    struct app *a = self;
    return bt_tui_quit(a->tui);
}

static int wakeup(void *self)
{
    struct app *a = self;
    return bt_tui_next_wakeup_ms(a->tui);
}

int main(int argc, char **argv)
{
    setlocale(LC_ALL, "");
    setlocale(LC_NUMERIC, "C");
    double minute = 16;
    struct bt_tui_opts o = {0};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--demo-at") && i + 1 < argc)
            minute = atof(argv[++i]);
        else if (!strcmp(argv[i], "--ascii"))
            o.ascii = true;
        else if (!strcmp(argv[i], "--no-color"))
            o.no_color = true;
        else if (!strcmp(argv[i], "--theme") && i + 1 < argc)
            o.theme = argv[++i];
    }
    static struct app a;
    bt_config_defaults(&a.cfg);
    bt_demo_config(&a.cfg);
    struct bt_store store;
    bt_store_init(&store, a.cfg.nroutes, a.cfg.history_minutes);
    struct bt_ctx ctx = {.cfg = &a.cfg, .store = &store, .mode = BT_MODE_LIVE};
    static const struct bt_collector_ops *const ops[] = {&bt_demo_collector};
    void *inst[1] = {bt_demo_collector.create(&ctx)};
    a.loop = (struct bt_loop){.ctx = &ctx, .ops = ops, .inst = inst, .n = 1, .paused = true};
    bt_clock_start(&a.loop.clock, (double)BT_DEMO_T0 + minute * 60, 1);
    bt_clock_freeze(&a.loop.clock, true);
    a.host = (struct bt_tui_host){.cfg = &a.cfg, .store = &store, .mode = "demo",
                                  .interval = a.cfg.interval, .paused = true,
                                  .metrics_per_poll = NAN, .metrics_per_day = NAN, .arg = &a,
                                  .refresh_now = refresh_now, .set_paused = set_paused,
                                  .set_interval = set_interval};
    char err[256];
    a.tui = bt_tui_new(&o, &a.host, err, sizeof err);
    if (!a.tui) {
        fprintf(stderr, "tuidrv: %s\n", err);
        return 3;
    }
    atexit(bt_tui_emergency_restore);
    struct bt_loop_view view = {.self = &a, .input_fd = 0, .on_input = on_input,
                                .on_update = on_update, .on_resize = on_resize, .done = done,
                                .next_wakeup_ms = wakeup};
    a.loop.view = &view;
    bt_loop_signals();
    int rc = bt_loop_run(&a.loop);
    bt_tui_free(a.tui);
    bt_demo_collector.destroy(inst[0]);
    bt_store_free(&store);
    bt_config_free(&a.cfg);
    return rc > 0 ? 128 + rc : 0;
}
