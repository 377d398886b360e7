/* Themes: style parsing, fallback to the default for missing keys, file
 * errors with file:line, the shipped themes load, color reduction. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/tap.h"
#include "tui/keys.h"
#include "tui/theme.h"

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

int main(void)
{
    struct bt_style st;
    OK(bt_style_parse("black on #ffaf00 bold underline", &st) && st.fg == 0 &&
           st.bg == (BT_COLOR_RGB | 0xffaf00) && st.attrs == (BT_ATTR_BOLD | BT_ATTR_UNDERLINE),
       "fg on #rrggbb with attributes");
    OK(bt_style_parse("bright-red", &st) && st.fg == 9 && st.bg == BT_COLOR_DEFAULT,
       "bright names are 8-15");
    OK(bt_style_parse("reverse", &st) && st.fg == BT_COLOR_DEFAULT && st.attrs == BT_ATTR_REVERSE,
       "attributes only");
    OK(bt_style_parse("208 on 17", &st) && st.fg == 208 && st.bg == 17, "palette numbers");
    OK(!bt_style_parse("red on", &st), "'on' without a color is an error");
    OK(!bt_style_parse("#12345g", &st), "bad hex is an error");
    OK(!bt_style_parse("red green blue", &st), "three colors is an error");
    OK(!bt_style_parse("blinking", &st), "unknown word is an error");

    /* The built-in default equals themes/default.theme, key by key. */
    char path[1200];
    snprintf(path, sizeof path, "%s/themes/default.theme", tap_srcdir());
    struct bt_theme def, file;
    char err[512] = "";
    bt_theme_default(&def);
    bt_theme_default(&file);
    /* scramble first, so an unread key would show */
    for (int r = 0; r < BT_ROLE_COUNT; r++)
        file.role[r] = (struct bt_style){77, 77, 0};
    OK(bt_theme_load_file(&file, path, err, sizeof err), "default.theme loads %s", err);
    OK(!memcmp(def.role, file.role, sizeof def.role),
       "themes/default.theme sets every role to the built-in value");

    /* A partial theme: missing keys fall back to the default. */
    char dir[256];
    snprintf(dir, sizeof dir, "/tmp/bedtop-theme-test.%d", (int)getpid());
    char cmd[400];
    snprintf(cmd, sizeof cmd, "mkdir -p %s/bedtop/themes", dir);
    OK(system(cmd) == 0, "temp dir");
    snprintf(path, sizeof path, "%s/bedtop/themes/mine.theme", dir);
    write_file(path, "# mine\ncrit = #ff0000 bold\n\nbanner = reverse\n");
    setenv("XDG_CONFIG_HOME", dir, 1);
    struct bt_theme t;
    OK(bt_theme_load(&t, "mine", err, sizeof err), "user theme found under XDG_CONFIG_HOME %s",
       err);
    OK(t.role[BT_ROLE_CRIT].fg == (BT_COLOR_RGB | 0xff0000), "a key the file sets is used");
    OK(t.role[BT_ROLE_BANNER].attrs == BT_ATTR_REVERSE &&
           t.role[BT_ROLE_BANNER].bg == BT_COLOR_DEFAULT, "the whole style is replaced");
    OK(!memcmp(&t.role[BT_ROLE_SETTLED], &def.role[BT_ROLE_SETTLED], sizeof(struct bt_style)),
       "a missing key keeps the default");

    write_file(path, "crit = red\nwarn = yellow purple\n");
    OK(!bt_theme_load(&t, "mine", err, sizeof err) && strstr(err, "mine.theme:2:") &&
           strstr(err, "warn"), "bad style names file:line and key (%s)", err);
    write_file(path, "crit = red\n\n\nbogus = red\n");
    OK(!bt_theme_load(&t, "mine", err, sizeof err) && strstr(err, "mine.theme:4:") &&
           strstr(err, "unknown key 'bogus'"), "unknown key names file:line (%s)", err);
    OK(!bt_theme_load(&t, "nosuch", err, sizeof err) && strstr(err, "theme 'nosuch' not found"),
       "missing theme is a clear error (%s)", err);

    /* The shipped themes all load (found via the source tree's themes/). */
    snprintf(path, sizeof path, "%s/themes", tap_srcdir());
    static const char *const shipped[] = {"default", "light", "high-contrast", "monochrome"};
    for (size_t i = 0; i < sizeof shipped / sizeof shipped[0]; i++) {
        char p2[1400];
        snprintf(p2, sizeof p2, "%s/%s.theme", path, shipped[i]);
        bt_theme_default(&t);
        err[0] = '\0';
        OK(bt_theme_load_file(&t, p2, err, sizeof err), "%s.theme loads %s", shipped[i], err);
    }
    bt_theme_default(&t);
    snprintf(path, sizeof path, "%s/themes/monochrome.theme", tap_srcdir());
    bt_theme_load_file(&t, path, err, sizeof err);
    int colored = 0;
    for (int r = 0; r < BT_ROLE_COUNT; r++)
        colored += t.role[r].fg != BT_COLOR_DEFAULT || t.role[r].bg != BT_COLOR_DEFAULT;
    OK(colored == 0, "monochrome.theme sets no color at all (%d roles colored)", colored);

    /* The theme list: default first, the user's theme found. */
    char names[32][64];
    int n = bt_theme_list(names, 32);
    bool mine = false;
    for (int i = 0; i < n; i++)
        mine |= !strcmp(names[i], "mine");
    OK(n >= 2 && !strcmp(names[0], "default") && mine, "theme list: default first, user themes");

    /* Color reduction: #ff0000 -> cube (5,0,0) = 16 + 180 = 196; #808080 -> gray ramp
     * 232 + (128-8)/10 = 244; 8 colors: #ff0000 red (1), #00ff00 green (2), #ffaf00 yellow (3). */
    OK(bt_color_to_256(BT_COLOR_RGB | 0xff0000) == 196, "#ff0000 -> 196");
    OK(bt_color_to_256(BT_COLOR_RGB | 0x808080) == 244, "#808080 -> 244 (gray ramp)");
    OK(bt_color_to_256(45) == 45, "palette colors pass through");
    OK(bt_color_to_8(BT_COLOR_RGB | 0xff0000) == 1 && bt_color_to_8(BT_COLOR_RGB | 0x00ff00) == 2 &&
           bt_color_to_8(BT_COLOR_RGB | 0xffaf00) == 3, "rgb -> 8 colors");
    OK(bt_color_to_8(9) == 1 && bt_color_to_8(BT_COLOR_DEFAULT) == BT_COLOR_DEFAULT,
       "bright-red -> red; default stays");

    /* Keys: one table; the help is generated from it with aliases joined. */
    char lines[64][96];
    int nl = bt_keys_help(lines, 64);
    bool help_line = false, quit_line = false;
    for (int i = 0; i < nl; i++) {
        help_line |= !strncmp(lines[i], "?, F1, h ", 9);
        quit_line |= !strncmp(lines[i], "q ", 2) && strstr(lines[i], "quit");
    }
    OK(help_line && quit_line, "help lists '?, F1, h' together and q quit");
    OK(bt_key_action('q', BT_CTX_OVERVIEW) == BT_ACT_BACK_OR_QUIT &&
           bt_key_action('j', BT_CTX_OVERVIEW) == BT_ACT_DOWN &&
           bt_key_action('\t', BT_CTX_OVERVIEW) == BT_ACT_FOCUS &&
           bt_key_action('\t', BT_CTX_DETAIL) == BT_ACT_NEXT_ROUTE &&
           bt_key_action('\n', BT_CTX_DETAIL) == BT_ACT_NONE,
       "actions depend on the view");
    /* no key bound twice in one context: the table stays one source of truth */
    int dup = 0;
    for (size_t i = 0; i < bt_nkeys; i++)
        for (size_t j = i + 1; j < bt_nkeys; j++)
            if (bt_keys[i].key == bt_keys[j].key && (bt_keys[i].contexts & bt_keys[j].contexts))
                dup++;
    OK(dup == 0, "no key bound twice in a view (%d)", dup);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    OK(system(cmd) == 0, "cleanup");
    return tap_done();
}
