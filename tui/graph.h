/* Graphs rendered into a character-cell canvas: braille line plots, block
 * bar charts and segmented bars, each with an ASCII twin. Pure functions with
 * no terminal, so they are unit-tested by reading the cells back. */
#ifndef BEDTOP_GRAPH_H
#define BEDTOP_GRAPH_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bt_cell {
    uint32_t ch;          /* Unicode code point; 0 = empty (drawn as a blank) */
    unsigned char role;   /* theme role (tui/theme.h) */
};

struct bt_canvas {
    int w, h;
    struct bt_cell *c;
};

void bt_canvas_init(struct bt_canvas *cv, int w, int h);
void bt_canvas_free(struct bt_canvas *cv);
void bt_canvas_set(struct bt_canvas *cv, int x, int y, uint32_t ch, unsigned char role);
const struct bt_cell *bt_canvas_get(const struct bt_canvas *cv, int x, int y); /* NULL outside */
/* Row y as UTF-8 (empty cells as blanks); returns the length written. */
size_t bt_canvas_row_utf8(const struct bt_canvas *cv, int y, char *out, size_t n);
/* Encodes one code point as UTF-8 into out (>= 5 bytes); returns its length. */
size_t bt_utf8_encode(uint32_t cp, char *out);

enum bt_series_kind { BT_SER_LINE, BT_SER_LEVEL };

struct bt_plot_series {
    enum bt_series_kind kind; /* LINE: values; LEVEL: a constant line at .level (quota, limit) */
    const double *v;          /* LINE: n values, oldest first; NAN = gap */
    int n;
    double level;
    unsigned char role;
    char ascii;               /* glyph of this series in the ASCII set */
    uint32_t glyph;           /* bt_graph_dots: its glyph (0: ascii) */
    int merge_with;           /* bt_graph_dots: 1 + the index of a series which, when on the
                               * same cell, is shown by merge_glyph (0: none) */
    uint32_t merge_glyph;
    bool over;                /* bt_graph_dots: marks where it lies above a level */
    bool below, above;        /* bt_graph_dots, a LEVEL: marked where any LINE lies under
                               * it (a floor: the speed below which calls are slow) or
                               * over it (a ceiling), whatever the lines' over */
};

/* Points a plot of width w shows: 2 per cell with braille, 1 in ASCII. */
int bt_graph_points(int w, bool utf8);
/* Line plot of the series over the area (x, y, w, h), 0 at the bottom and
 * ymax at the top. Each LINE series should hold bt_graph_points(w) values
 * (fewer are right-aligned: newest at the right edge). Later series win a
 * shared cell's color. */
void bt_graph_plot(struct bt_canvas *cv, int x, int y, int w, int h,
                   const struct bt_plot_series *s, int ns, double ymax, bool utf8);
/* Dot plot at cell resolution, one value per column (newest at the right edge),
 * each series in its own glyph so series are told apart without color. LEVEL series
 * are dashed lines drawn first; where a LINE series with over set lies above a
 * level, that column's level cell becomes '!' in over_role (a quota crossing); a
 * LEVEL with below (above) set is marked so where any LINE lies under (over) it.
 * Later series are drawn over earlier ones, except where merge_with names the
 * series already there: then the cell shows merge_glyph. */
void bt_graph_dots(struct bt_canvas *cv, int x, int y, int w, int h,
                   const struct bt_plot_series *s, int ns, double ymax, bool utf8,
                   unsigned char over_role);
/* Row (0 = top) of value v in a plot of h rows from 0 to ymax, clamped. */
int bt_graph_row(double v, double ymax, int h);
/* Vertical bars, one value per column (newest right), eighth-block tops in UTF-8. */
void bt_graph_bars(struct bt_canvas *cv, int x, int y, int w, int h, const double *v, int n,
                   double ymax, unsigned char role, bool utf8);
/* Scatter: points (xs[i], ys[i]) in [0,xmax] x [0,ymax]; a vertical marker at mark_x (NAN none). */
void bt_graph_scatter(struct bt_canvas *cv, int x, int y, int w, int h, const double *xs,
                      const double *ys, int n, double xmax, double ymax, unsigned char role,
                      double mark_x, unsigned char mark_role, bool utf8);

/* One segment of a used-vs-quota bar; glyphs come from the fixed set below. */
enum bt_seg { BT_SEG_SETTLED, BT_SEG_ESTIMATED, BT_SEG_RESERVED, BT_SEG_COUNT };
/* Horizontal bar of width w on row y: cells up to settled drawn as settled,
 * beyond that up to estimated as estimated, beyond that up to reserved as
 * reserved; the rest empty. A value above total marks the last cell '!'.
 * roles[] gives each segment's role, empty_role the rest. NAN values are skipped;
 * total NAN or <= 0 draws nothing and returns false. */
bool bt_graph_hbar(struct bt_canvas *cv, int x, int y, int w, const double v[BT_SEG_COUNT],
                   double total, const unsigned char roles[BT_SEG_COUNT],
                   unsigned char empty_role, unsigned char over_role, bool utf8);
/* The glyph used for a segment (and BT_SEG_COUNT: empty) in either set, for legends. */
uint32_t bt_graph_seg_glyph(enum bt_seg s, bool utf8);
#endif
