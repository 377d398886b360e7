/* Panes of wrapped text lines with a title rule (warnings). */
#include "tui/view.h"

#include <stdio.h>
#include <string.h>

#include "core/util.h"

void tui_add_wline(struct wline *lines, int *n, enum bt_role role, const char *s, int lead,
                      enum bt_role lead_role)
{
    if (*n >= MAX_WLINES)
        return;
    struct wline *w = &lines[(*n)++];
    bt_strlcpy(w->s, s, sizeof w->s);
    w->role = role;
    w->lead = lead;
    w->lead_role = lead_role;
}

/* Word-wraps s at width w into lines indented by indent. */
void tui_wrap(struct wline *lines, int *n, const char *s, int w, int indent, enum bt_role role)
{
    int avail = w - indent;
    if (avail < 10)
        avail = 10;
    const char *p = s;
    while (*p) {
        int len = (int)strlen(p);
        int cut = len;
        if (len > avail) {
            cut = avail;
            while (cut > 0 && p[cut] != ' ')
                cut--;
            if (cut == 0)
                cut = avail;
        }
        char buf[400];
        snprintf(buf, sizeof buf, "%*s%.*s", indent, "", cut, p);
        tui_add_wline(lines, n, role, buf, 0, role);
        p += cut;
        while (*p == ' ')
            p++;
    }
}

/* Overview: one line per warning over the visible routes, worst first. */

void tui_draw_wlines(struct bt_tui *t, struct bt_rect area, const char *title,
                        const struct wline *lines, int n)
{
    if (area.h <= 0)
        return;
    tui_rule(t, area.y, area.x, area.w, title);
    int rows = area.h - 1;
    for (int i = 0; i < n && i < rows; i++) {
        int y = area.y + 1 + i;
        if (i == rows - 1 && n > rows) {
            char more[96];
            if (t->view == BT_VIEW_DETAIL)
                snprintf(more, sizeof more, " ... %d more lines (a taller terminal shows "
                         "them)", n - rows + 1);
            else
                snprintf(more, sizeof more, " ... %d more (Enter on a route shows all of its "
                         "warnings)", n - rows + 1);
            tui_text(y, area.x, area.w, more, A(t, BT_ROLE_DIM));
            break;
        }
        int x = area.x + 1;
        const struct wline *w = &lines[i];
        if (w->lead) {
            char lead[16];
            snprintf(lead, sizeof lead, "%.*s", w->lead, w->s);
            x += tui_text(y, x, area.w - 1, lead, A(t, w->lead_role));
        }
        tui_text(y, x, area.x + area.w - x, w->s + w->lead, A(t, w->role));
    }
}
