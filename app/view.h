/* The dashboard's terminal view on the single loop, shared by the live
 * dashboard and the replay: the TUI, the loop's view callbacks, signal
 * handlers, terminal restore at exit and the 128+signal exit code. */
#ifndef BEDTOP_APP_VIEW_H
#define BEDTOP_APP_VIEW_H
#include <stdint.h>

#include "app/app.h"
#include "net/loop.h"
#include "tui/tui.h"

struct app_view {
    struct bt_tui_host *host;
    struct bt_loop *loop;
    /* Before every redraw check: brings host fields up to date (now, ...). */
    void (*before_update)(void *arg, int64_t now);
    /* Milliseconds until the command wants an update of its own (-1 none); may be NULL. */
    int (*wakeup_ms)(void *arg);
    void *arg;
    bool bell;                               /* --bell: the terminal bell when a route turns crit */
    struct bt_tui *tui;                      /* set while running */
};

/* Opens the TUI on v->host and runs v->loop until q or a quit signal.
 * Returns 0, 128+signal, or 3 when the terminal cannot be set up. */
int app_view_run(struct app_view *v, const struct app_opts *o);
#endif
