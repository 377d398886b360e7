/* Drawing primitives: clipped text, fills, glyphs, rules, canvases, boxes. */
#include "tui/view.h"

#include <string.h>
#include <wchar.h>

/* Draws s (at most w columns): bytes outside printable ASCII become '?', so
 * outside tui_text (route names, error strings) can never emit escape sequences. */
int tui_text(int y, int x, int w, const char *s, attr_t a)
{
    int n = 0;
    if (y < 0 || y >= LINES || x < 0)
        return 0;
    if (x + w > COLS)
        w = COLS - x;
    attrset(a);
    for (; s && s[n] && n < w; n++) {
        unsigned char c = (unsigned char)s[n];
        mvaddch(y, x + n, (c < 32 || c > 126) ? '?' : c);
    }
    attrset(A_NORMAL);
    return n;
}

void tui_fill(int y, int x, int w, attr_t a)
{
    if (y < 0 || y >= LINES)
        return;
    if (x + w > COLS)
        w = COLS - x;
    attrset(a);
    for (int i = 0; i < w; i++)
        mvaddch(y, x + i, ' ');
    attrset(A_NORMAL);
}

void tui_glyph(int y, int x, uint32_t cp, attr_t a)
{
    if (y < 0 || y >= LINES || x < 0 || x >= COLS)
        return;
    if (cp < 128) {
        attrset(a);
        mvaddch(y, x, cp ? (chtype)cp : ' ');
        attrset(A_NORMAL);
        return;
    }
    cchar_t cc;
    wchar_t w[2] = {(wchar_t)cp, 0};
    setcchar(&cc, w, a & ~A_COLOR, (short)PAIR_NUMBER(a), NULL);
    mvadd_wch(y, x, &cc);
}

void tui_rule(const struct bt_tui *t, int y, int x, int w, const char *title)
{
    uint32_t h = t->utf8 ? 0x2500 : '-';
    for (int i = 0; i < w; i++)
        tui_glyph(y, x + i, h, A(t, BT_ROLE_RULE));
    if (title && *title && w > 4) {
        tui_text(y, x + 1, 1, " ", A(t, BT_ROLE_TITLE));
        int n = tui_text(y, x + 2, w - 4, title, A(t, BT_ROLE_TITLE));
        tui_text(y, x + 2 + n, 1, " ", A(t, BT_ROLE_TITLE));
    }
}

void tui_blit(const struct bt_tui *t, const struct bt_canvas *cv, int y, int x)
{
    for (int cy = 0; cy < cv->h; cy++)
        for (int cx = 0; cx < cv->w; cx++) {
            const struct bt_cell *c = bt_canvas_get(cv, cx, cy);
            if (c->ch)
                tui_glyph(y + cy, x + cx, c->ch, A(t, (enum bt_role)c->role));
        }
}

/* A bordered box with a title, drawn over the other panes (help, markers). */
void tui_box(const struct bt_tui *t, struct bt_rect h, const char *title, attr_t a)
{
    for (int y = 0; y < h.h; y++)
        tui_fill(h.y + y, h.x, h.w, a);
    uint32_t hz = t->utf8 ? 0x2500 : '-', vt = t->utf8 ? 0x2502 : '|';
    uint32_t c[4] = {'+', '+', '+', '+'};
    if (t->utf8) {
        c[0] = 0x250C, c[1] = 0x2510, c[2] = 0x2514, c[3] = 0x2518;
    }
    for (int x = 1; x < h.w - 1; x++) {
        tui_glyph(h.y, h.x + x, hz, a);
        tui_glyph(h.y + h.h - 1, h.x + x, hz, a);
    }
    for (int y = 1; y < h.h - 1; y++) {
        tui_glyph(h.y + y, h.x, vt, a);
        tui_glyph(h.y + y, h.x + h.w - 1, vt, a);
    }
    tui_glyph(h.y, h.x, c[0], a);
    tui_glyph(h.y, h.x + h.w - 1, c[1], a);
    tui_glyph(h.y + h.h - 1, h.x, c[2], a);
    tui_glyph(h.y + h.h - 1, h.x + h.w - 1, c[3], a);
    tui_text(h.y, h.x + 2, h.w - 4, title, a | A_BOLD);
}

/* The recording's markers, one a line, the selected one highlighted. */
