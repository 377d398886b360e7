/* The dashboard's terminal view on the loop (live and replay). */
#include "app/view.h"

#include <stdlib.h>
#include <unistd.h>

#include "core/util.h"
#include "io/file.h"

static void view_input(void *self)
{
    struct app_view *v = self;
    bt_tui_input(v->tui);
}

static void view_update(void *self, int64_t now)
{
    struct app_view *v = self;
    if (v->before_update)
        v->before_update(v->arg, now);
    bt_tui_update(v->tui);
}

static void view_resize(void *self)
{
    struct app_view *v = self;
    bt_tui_resize(v->tui);
}

static bool view_done(void *self)
{
    struct app_view *v = self;
    return bt_tui_quit(v->tui);
}

static int view_wakeup(void *self)
{
    struct app_view *v = self;
    int ms = bt_tui_next_wakeup_ms(v->tui);
    int own = v->wakeup_ms ? v->wakeup_ms(v->arg) : -1;
    if (own >= 0 && (ms < 0 || own < ms))
        ms = own;
    return ms;
}

int app_view_run(struct app_view *v, const struct app_opts *o)
{
    char err[600];
    struct bt_tui_opts to = {.theme = o->theme, .ascii = o->ascii, .no_color = o->no_color,
                             .bell = v->bell};
    v->tui = bt_tui_new(&to, v->host, err, sizeof err);
    if (!v->tui) {
        bt_err("%s", err);
        return 3;
    }
    atexit(bt_tui_emergency_restore);
    struct bt_loop_view lv = {.self = v, .input_fd = STDIN_FILENO, .on_input = view_input,
                              .on_update = view_update, .on_resize = view_resize,
                              .done = view_done, .next_wakeup_ms = view_wakeup};
    v->loop->view = &lv;
    bt_loop_signals();
    int sig = bt_loop_run(v->loop);
    bt_tui_free(v->tui);
    v->tui = NULL;
    v->loop->view = NULL;
    return sig > 0 ? 128 + sig : 0;
}
