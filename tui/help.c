/* The help overlay (from the key table) and the too-small screen. */
#include "tui/view.h"

#include <stdio.h>
#include <string.h>

#include "tui/keys.h"

void tui_draw_help(struct bt_tui *t, const struct bt_layout *l)
{
    struct bt_rect h = l->help;
    if (h.w < 10 || h.h < 3)
        return;
    char lines[64][96];
    int n = bt_keys_help_mode(lines, 64, t->host->replay ? BT_CTX_REPLAY : BT_CTX_LIVE);
    attr_t a = A(t, BT_ROLE_HELP);
    tui_box(t, h, t->host->replay ? " bedtop replay keys (Esc or ? closes) "
                                   : " bedtop keys (Esc or ? closes) ", a);
    for (int i = 0; i < n && i < h.h - 2; i++) {
        int y = h.y + 1 + i;
        if (i == h.h - 3 && n > h.h - 2) {
            tui_text(y, h.x + 2, h.w - 4, "... (a taller terminal shows every key)", a);
            break;
        }
        tui_text(y, h.x + 2, 13, lines[i], A(t, BT_ROLE_KEY));
        tui_text(y, h.x + 16, h.w - 17, lines[i] + 14, a);
    }
}

void tui_draw_too_small(struct bt_tui *t, int cols, int rows)
{
    char l1[64], l2[64];
    snprintf(l1, sizeof l1, "need %dx%d", BT_LAYOUT_MIN_COLS, BT_LAYOUT_MIN_ROWS);
    snprintf(l2, sizeof l2, "have %dx%d", cols, rows);
    const char *lines[] = {"terminal too small:", l1, l2};
    int y0 = rows / 2 - 1;
    if (y0 < 0)
        y0 = 0;
    for (int i = 0; i < 3; i++) {
        int len = (int)strlen(lines[i]);
        int x = (cols - len) / 2;
        if (x < 0)
            x = 0;
        tui_text(y0 + i, x, cols - x, lines[i], A(t, i == 0 ? BT_ROLE_WARN : BT_ROLE_NORMAL));
    }
}
