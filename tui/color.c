/* Themes onto the terminal: color reduction, one attribute per role. */
#include "tui/view.h"

#include <stdio.h>

#include "core/util.h"

static const int ansi_rgb[16] = {0x000000, 0xcd0000, 0x00cd00, 0xcdcd00, 0x0000ee, 0xcd00cd,
                                 0x00cdcd, 0xe5e5e5, 0x7f7f7f, 0xff0000, 0x00ff00, 0xffff00,
                                 0x5c5cff, 0xff00ff, 0x00ffff, 0xffffff};

static int term_color(const struct bt_tui *t, int c)
{
    if (c == BT_COLOR_DEFAULT)
        return -1;
    switch (t->look.cm) {
    case CM_DIRECT:
        if (c & BT_COLOR_RGB)
            return c & 0xffffff;
        if (c < 16)
            return ansi_rgb[c];
        if (c < 232) {
            static const int cube[6] = {0, 95, 135, 175, 215, 255};
            int k = c - 16;
            return cube[k / 36] << 16 | cube[(k / 6) % 6] << 8 | cube[k % 6];
        }
        return (8 + (c - 232) * 10) * 0x010101;
    case CM_256:
        return bt_color_to_256(c);
    case CM_8: {
        int k = bt_color_to_8(c);
        return k;
    }
    default:
        return -1;
    }
}

void tui_apply_theme(struct bt_tui *t)
{
    for (int r = 0; r < BT_ROLE_COUNT; r++) {
        const struct bt_style *s = &t->look.theme.role[r];
        attr_t a = A_NORMAL;
        if (s->attrs & BT_ATTR_BOLD)
            a |= A_BOLD;
        if (s->attrs & BT_ATTR_DIM)
            a |= A_DIM;
        if (s->attrs & BT_ATTR_REVERSE)
            a |= A_REVERSE;
        if (s->attrs & BT_ATTR_UNDERLINE)
            a |= A_UNDERLINE;
        if (t->look.cm == CM_MONO) {
            /* without color a background is the only thing reverse video can say */
            if (s->bg != BT_COLOR_DEFAULT)
                a |= A_REVERSE;
        } else if (s->fg != BT_COLOR_DEFAULT || s->bg != BT_COLOR_DEFAULT) {
            int pair = r + 1;
            int fg = term_color(t, s->fg), bg = term_color(t, s->bg);
            if (t->look.cm == CM_DIRECT)
                init_extended_pair(pair, fg, bg);
            else
                init_pair((short)pair, (short)fg, (short)bg);
            a |= COLOR_PAIR(pair);
            /* 8-color terminals: bright names are bold of the base color */
            if (t->look.cm == CM_8 && s->fg >= 8 && s->fg < 16)
                a |= A_BOLD;
        }
        t->look.attr[r] = a;
    }
}

void tui_load_theme(struct bt_tui *t, const char *name)
{
    char err[400];
    if (!bt_theme_load(&t->look.theme, name, err, sizeof err)) {
        bt_theme_default(&t->look.theme);
        bt_fmt_cut(t->msg, sizeof t->msg, "%s; using the default theme", err);
    }
}
