X=abc
false
nosuchcmd
printf %s "$X" | rev
echo "$X-tail" | cut -c1-3
printf '%s\n' "two
lines"
echo done > /app/out.txt
