/* The drawing primitives (tui/draw.c) hand curses a run of cells at a time (waddchnstr,
 * whline) instead of one waddch a cell: the cells on the screen must be the ones the
 * per-cell waddch calls wrote. Each case draws with the primitives on a curses screen
 * writing to /dev/null, reads every cell back (character, attributes, colour pair),
 * draws the same with the per-cell reference below (draw.c's code before the runs) on
 * the erased screen, and compares the two screens cell for cell. */
#include <curses.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "tui/view.h"
#undef OK /* curses' return code: tap's check from here on */
#include "tests/tap.h"

/* ---- the reference: one waddch (or wadd_wch) a cell, as tui/draw.c drew before ---- */
static void ref_glyph(int y, int x, uint32_t cp, attr_t a)
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

static void ref_fill(int y, int x, int w, attr_t a)
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

/* The reference's reading of text: printable ASCII as is, a control byte '?', a valid
 * UTF-8 character of width >= 1 as itself (the cases below hold nothing else). */
static int ref_text(int y, int x, int w, const char *s, attr_t a)
{
    if (y < 0 || y >= LINES || x < 0)
        return 0;
    if (x + w > COLS)
        w = COLS - x;
    int n = 0;
    mbstate_t ms;
    memset(&ms, 0, sizeof ms);
    while (*s) {
        uint32_t cp = '?';
        int cols = 1;
        size_t len = 1;
        unsigned char c = (unsigned char)*s;
        if (c >= 32 && c < 127) {
            cp = c;
        } else if (c >= 0x80) {
            wchar_t wc;
            len = mbrtowc(&wc, s, strlen(s), &ms);
            int cw = wcwidth(wc);
            if (cw >= 1) {
                cp = (uint32_t)wc;
                cols = cw;
            }
        }
        if (n + cols > w)
            break;
        ref_glyph(y, x + n, cp, a);
        n += cols;
        s += len;
    }
    return n;
}

struct ops {
    void (*fill)(int, int, int, attr_t);
    int (*text)(int, int, int, const char *, attr_t);
    void (*glyph)(int, int, uint32_t, attr_t);
};

struct cell {
    wchar_t ch;
    attr_t attrs;
    short pair;
};

static void snapshot(struct cell *out)
{
    for (int y = 0; y < LINES; y++)
        for (int x = 0; x < COLS; x++) {
            cchar_t cc;
            wchar_t wch[CCHARW_MAX + 1] = {0};
            attr_t at = 0;
            short pair = 0;
            mvin_wch(y, x, &cc);
            getcchar(&cc, wch, &at, &pair, NULL);
            out[y * COLS + x] = (struct cell){wch[0], at, pair};
        }
}

/* What a frame does, in small: fills, text over them, glyphs, cuts and clips. */
static void scene(const struct ops *o, int kase)
{
    attr_t red = COLOR_PAIR(1) | A_BOLD, sel = COLOR_PAIR(2) | A_REVERSE, dim = COLOR_PAIR(3) | A_DIM;
    switch (kase) {
    case 0: /* a row filled, cells of text over it, right-aligned, in other roles */
        o->fill(2, 0, COLS, sel);
        o->text(2, 1, 12, "claude-prod", sel | A_BOLD);
        o->text(2, 20, 6, "  84.1", red);
        o->text(2, 30, 3, "OK", A_NORMAL);
        break;
    case 1: /* UTF-8 glyphs amid ASCII (ellipsis, middle dot, blocks, box drawing) */
        o->text(0, 0, COLS, "data 10:13 \xc2\xb7 now 10:16 \xe2\x96\x88\xe2\x96\x8c\xe2\x94\x80x\xe2\x80\xa6", red);
        o->glyph(1, 5, 0x2588, dim);
        o->glyph(1, 6, 'A', dim);
        o->glyph(1, 7, 0, red); /* 0 draws a blank */
        break;
    case 2: /* outside text: control bytes and an escape sequence are '?', never sent */
        o->text(3, 2, 40, "evil\x1b[31mred\x07\x7f!", A_NORMAL);
        break;
    case 3: /* cut at the width, clipped at the right edge, the last column */
        o->text(4, COLS - 5, 20, "0123456789", sel);
        o->text(5, 10, 4, "abcdefgh", red);
        o->glyph(6, COLS - 1, '#', red);
        o->glyph(6, COLS, '#', red); /* off the screen: nothing */
        o->text(LINES - 1, 0, COLS + 10, "the last line's text reaching the last column and further on", dim);
        break;
    case 4: /* fills: partial, at the edge, past it, empty, then text over a fill */
        o->fill(7, 5, 10, red);
        o->fill(8, COLS - 3, 10, sel);
        o->fill(9, 0, 0, red);
        o->fill(10, 3, 20, dim);
        o->text(10, 6, 8, "in a fill", A_NORMAL);
        o->fill(11, 0, COLS, A_NORMAL);
        break;
    case 5: /* a wide character (two columns) and text written over its halves */
        o->text(12, 0, 10, "\xe6\x97\xa5\xe6\x9c\xac", sel);
        o->text(12, 1, 2, "ab", red);
        o->text(13, 0, 3, "\xe6\x97\xa5\xe6\x9c\xac", A_NORMAL); /* cut: the second does not fit */
        break;
    default: /* a screenful: every row filled and written, as the overview draws */
        for (int y = 0; y < LINES; y++) {
            attr_t a = y % 3 == 0 ? sel : y % 3 == 1 ? red : dim;
            o->fill(y, 0, COLS, a);
            char line[64];
            snprintf(line, sizeof line, "route-%02d  us-east-1  %5.1f%%  \xe2\x96\x88\xe2\x96\x88", y, 1.5 * y);
            o->text(y, 2, COLS - 2, line, a ^ A_BOLD);
        }
        break;
    }
}

int main(void)
{
    setlocale(LC_ALL, "C.UTF-8");
    FILE *out = fopen("/dev/null", "w"), *in = fopen("/dev/null", "r");
    SCREEN *scr = out && in ? newterm("xterm-256color", out, in) : NULL;
    if (!scr) {
        SKIP("no curses screen for xterm-256color (terminfo missing)");
        return tap_done();
    }
    set_term(scr);
    resizeterm(24, 80);
    start_color();
    use_default_colors();
    init_pair(1, COLOR_RED, -1);
    init_pair(2, COLOR_BLACK, COLOR_CYAN);
    init_pair(3, COLOR_WHITE, COLOR_BLUE);
    tui_draw_utf8(true);
    tui_unclip();
    struct ops fast = {tui_fill, tui_text, tui_glyph}, ref = {ref_fill, ref_text, ref_glyph};
    size_t n = (size_t)LINES * (size_t)COLS;
    struct cell *a = calloc(n, sizeof *a), *b = calloc(n, sizeof *b);
    for (int kase = 0; kase <= 6; kase++) {
        erase();
        scene(&fast, kase);
        snapshot(a);
        erase();
        scene(&ref, kase);
        snapshot(b);
        int diff = -1;
        for (size_t i = 0; i < n && diff < 0; i++)
            if (a[i].ch != b[i].ch || a[i].attrs != b[i].attrs || a[i].pair != b[i].pair)
                diff = (int)i;
        OK(diff < 0, "case %d: the runs write the cells waddch wrote%s", kase,
           diff < 0 ? "" : " (first difference below)");
        if (diff >= 0)
            printf("# row %d col %d: runs U+%04X attrs %#x pair %d, waddch U+%04X attrs %#x pair %d\n",
                   diff / COLS, diff % COLS, (unsigned)a[diff].ch, (unsigned)a[diff].attrs, a[diff].pair,
                   (unsigned)b[diff].ch, (unsigned)b[diff].attrs, b[diff].pair);
    }
    /* the same text drawn both ways lands: a sanity check of the reading back */
    erase();
    tui_text(0, 0, 10, "bedtop", COLOR_PAIR(1));
    OK(a && (mvinch(0, 0) & A_CHARTEXT) == 'b' && (mvinch(0, 5) & A_CHARTEXT) == 'p' &&
           PAIR_NUMBER(mvinch(0, 0)) == 1,
       "the screen reads back what was drawn (b ... p in pair 1)");
    free(a);
    free(b);
    endwin();
    delscreen(scr);
    fclose(out);
    fclose(in);
    return tap_done();
}
