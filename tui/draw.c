/* Drawing primitives: clipped text, fills, glyphs, rules, canvases, boxes. */
#include "tui/view.h"

#include <string.h>
#include <wchar.h>

#include "core/sanitize.h"

/* Where drawing lands: rows [top, bottom) of the screen, document row y drawn at
 * y - yoff (the detail's scrolled document); by default the whole screen. */
static struct {
    int top, bottom, yoff;
} clip = {0, 1 << 30, 0};
static bool g_utf8;

void tui_draw_utf8(bool on)
{
    g_utf8 = on;
}

void tui_clip(int top, int bottom, int yoff)
{
    clip.top = top;
    clip.bottom = bottom;
    clip.yoff = yoff;
}

void tui_unclip(void)
{
    tui_clip(0, 1 << 30, 0);
}

/* Screen row of drawing row y, or -1 when it is clipped away. */
static int row(int y)
{
    y -= clip.yoff;
    if (y < clip.top || y >= clip.bottom || y < 0 || y >= LINES)
        return -1;
    return y;
}

/* The next character of s: its code point (U+FFFD '?' for what a terminal must not
 * get), its length in bytes and its width in columns. Valid printable UTF-8 is
 * kept in a UTF-8 locale; control bytes, C1 and invalid sequences become '?'. */
static uint32_t next_char(const char *s, int *len, int *cols)
{
    unsigned char c = (unsigned char)s[0];
    *len = 1;
    *cols = 1;
    if (c >= 32 && c < 127)
        return c;
    int n = c >= 0x80 ? bt_utf8_len((const unsigned char *)s) : 0;
    if (n > 1) {
        *len = n;
        uint32_t cp = c & (0xFF >> (n + 1));
        for (int i = 1; i < n; i++)
            cp = cp << 6 | ((unsigned char)s[i] & 0x3F);
        int w = cp >= 0xA0 ? wcwidth((wchar_t)cp) : -1;
        if (g_utf8 && w >= 1) {
            *cols = w;
            return cp;
        }
    }
    return '?';
}

int tui_width(const char *s)
{
    int w = 0, len, cols;
    for (; s && *s; s += len) {
        next_char(s, &len, &cols);
        w += cols;
    }
    return w;
}

/* A run of ASCII cells: one call into curses for the run instead of one waddch a
 * cell (waddch's per-cell work was most of a frame). The cells are the ones waddch
 * writes with the attribute set: no background is set on the screen, so rendering
 * a plain character with the window's attribute is the character or'ed with it. */
struct run {
    int y, x, n;
    chtype c[256];
};

static void run_flush(struct run *r)
{
    if (r->n > 0)
        mvaddchnstr(r->y, r->x, r->c, r->n);
    r->n = 0;
}

static void run_add(struct run *r, int x, uint32_t cp, attr_t a)
{
    if (r->n && (r->x + r->n != x || r->n == (int)(sizeof r->c / sizeof r->c[0])))
        run_flush(r);
    if (!r->n)
        r->x = x;
    r->c[r->n++] = (chtype)(cp ? cp : ' ') | (chtype)a;
}

/* Draws s in at most w columns; returns the columns drawn. Outside text (route
 * names, error strings, marker notes) can never emit an escape sequence. */
int tui_text(int y, int x, int w, const char *s, attr_t a)
{
    int n = 0, len, cols;
    y = row(y);
    if (y < 0 || x < 0)
        return 0;
    if (x + w > COLS)
        w = COLS - x;
    struct run r = {.y = y};
    for (; s && *s; s += len) {
        uint32_t cp = next_char(s, &len, &cols);
        if (n + cols > w)
            break;
        if (cp < 128) {
            run_add(&r, x + n, cp, a);
        } else {
            run_flush(&r);
            tui_glyph(y + clip.yoff, x + n, cp, a);
        }
        n += cols;
    }
    run_flush(&r);
    return n;
}

/* As tui_text, but text cut at w ends in an ellipsis so the cut shows. */
int tui_text_cut(int y, int x, int w, const char *s, attr_t a)
{
    if (w <= 0)
        return 0;
    if (tui_width(s) <= w)
        return tui_text(y, x, w, s, a);
    int n = tui_text(y, x, w - 1, s, a);
    tui_glyph(y, x + n, g_utf8 ? 0x2026 : '~', a);
    return n + 1;
}

/* As tui_text_cut, but a cut falls between words: the text up to the last space that
 * leaves room for the ellipsis, never half a word (a word longer than w is cut). */
int tui_text_word(int y, int x, int w, const char *s, attr_t a)
{
    if (w <= 0)
        return 0;
    if (tui_width(s) <= w)
        return tui_text(y, x, w, s, a);
    int n = 0, len, cols, keep = -1;
    for (const char *p = s; *p; p += len) {
        next_char(p, &len, &cols);
        if (n + cols > w - 1)
            break;
        if (*p == ' ' && p > s && p[-1] != ' ')
            keep = (int)(p - s);
        n += cols;
    }
    if (keep <= 0)
        return tui_text_cut(y, x, w, s, a);
    char buf[1024];
    size_t k = (size_t)keep < sizeof buf - 1 ? (size_t)keep : sizeof buf - 1;
    memcpy(buf, s, k);
    buf[k] = '\0';
    int drawn = tui_text(y, x, w - 1, buf, a);
    tui_glyph(y, x + drawn, g_utf8 ? 0x2026 : '~', a);
    return drawn + 1;
}

void tui_fill(int y, int x, int w, attr_t a)
{
    y = row(y);
    if (y < 0)
        return;
    if (x < 0) {
        w += x;
        x = 0;
    }
    if (x + w > COLS)
        w = COLS - x;
    if (w <= 0)
        return;
    /* one run: whline renders the blank as waddch does, without its per-cell work */
    attrset(a);
    mvhline(y, x, ' ', w);
    attrset(A_NORMAL);
}

void tui_glyph(int y, int x, uint32_t cp, attr_t a)
{
    y = row(y);
    if (y < 0 || x < 0 || x >= COLS)
        return;
    if (cp < 128) {
        chtype c = (chtype)(cp ? cp : ' ') | (chtype)a; /* as waddch renders it (see run_add) */
        mvaddchnstr(y, x, &c, 1);
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
/* A canvas in one attribute (the selected or a stale row): the glyphs stay. */
void tui_blit_attr(const struct bt_canvas *cv, int y, int x, attr_t a)
{
    for (int cy = 0; cy < cv->h; cy++)
        for (int cx = 0; cx < cv->w; cx++) {
            const struct bt_cell *c = bt_canvas_get(cv, cx, cy);
            if (c->ch)
                tui_glyph(y + cy, x + cx, c->ch, a);
        }
}

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
