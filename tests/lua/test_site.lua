-- gpuexp history site DIR: eleven offline nights of a fake experiment (times set by the test) are
-- recorded, one of them with a real 5% slowdown of point b (re-measured: a regression) and one
-- with a flaky first measurement of point c (not confirmed: not one). The site is built and read
-- by a real browser (headless Chromium, network off) when one is installed: the index lists the
-- series, the series page has a chart per point with the regression marked once, every night's
-- value and run on hover, and links to every night's report; nothing is fetched from elsewhere.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")
local binary = assert(arg[1], "the gpuexp binary is the first argument")
local ws, fake_night = T.fake_nights(binary)
local work, read, run = ws.dir, ws.read, ws.run
local NIGHTS = 11
local changes = {[9] = "FAKE_SLOW=b=5", [10] = "FAKE_FLAKY=c=6"}
for n = 1, NIGHTS do
  local code = fake_night("h.sqlite", n, changes[n], "--quiet")
  T.eq(code, n == 9 and 1 or 0, "night " .. n)
end

local code, stdout, stderr = run("history --history h.sqlite site site")
T.eq(code, 0, "site: " .. stderr)
T.ok(stdout:find("wrote site/index.html: 1 series", 1, true), stdout)
local index, page = read("site/index.html"), read("site/series-1.html")
T.ok(index and page, "the index and the series page")
T.ok(index:find("<a href='series-1.html'>fake</a>", 1, true), "the index links the series")
T.ok(index:find(">11<", 1, true), "eleven nights")
local _, charts = page:gsub("<svg ", "")
T.eq(charts, 3, "a chart per point")
local _, marked = page:gsub("<circle class='regression'", "")
T.eq(marked, 1, "one regression marked: b on night 9 (c's flaky night was not confirmed)")
T.ok(page:find("<h3 class='bad'>case=b (1 regression)</h3>", 1, true), "the point with the regression is named")
T.ok(page:find("<ul class='changes'><li>run %d+, [^<]+: %+4%.9%d%%: instructions %+5%.0%% %(the time moved %+4%.9%%%)<br>" ..
  "OPEN since run %d+ %([^)]+%), 1 night, %+4%.9%d%% against the accepted level 2%.?%d*</li>"), "and what changed, from its " ..
  "counters, with its regression state: " .. (page:match("<ul class=.changes.>.-</ul>") or "none"))
T.ok(page:find("<li>run %d+, [^<]+: [-+]0%.%d+%%<br>FIXED: back at the accepted level 2%.?%d* %([-+]0%.%d+%%%); it was open since " ..
  "run %d+ %([^)]+%) for 1 night</li></ul>"), "the next night fixed it")
local _, suspects = page:gsub("<circle class='suspect'", "")
T.eq(suspects, 1, "c's flaky night: a suspect, not a regression")
local _, circles = page:gsub("<circle ", "")
T.eq(circles, 3 * NIGHTS, "every night's value of every point")
T.ok(page:find("run %d+, [^<]-: 2%.%d+ median_ms %(slower %+[45]%.%d+%%%)"), "the slow night's value on hover")
local _, reports = page:gsub("<a href='file:///[^']*/night%d+/report%.html'>report</a>", "")
T.eq(reports, NIGHTS, "a link to every night's report")
for _, text in ipairs({index, page}) do
  T.ok(not text:find("<script", 1, true) and not text:find("src=['\"]https?:") and not text:find("href=['\"]https?:"),
    "nothing from the network")
end

-- read by a browser: the DOM has what the files say
local dom = ws.browser_dom("site/series-1.html")
if dom then
  local _, svgs = dom:gsub("<svg ", "")
  T.eq(svgs, 3, "the browser parsed three charts")
  local _, red = dom:gsub('<circle class="regression"', "")
  T.eq(red, 1, "and one marked regression")
  T.ok(dom:find("<title>run %d+"), "with the runs' titles")
  T.ok(dom:find("instructions +5.0%", 1, true), "the explanation is on the page the browser built")
end
T.eq(run("history --history h.sqlite site"), 2, "site without a folder")
T.done()
