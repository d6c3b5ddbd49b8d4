local ok = true
ok = = 2
