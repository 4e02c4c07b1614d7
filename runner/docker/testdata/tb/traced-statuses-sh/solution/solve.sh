X=abc
false
nosuchcmd
printf %s "$X" | rev
echo "$X-tail" | cut -c1-3
echo done > /app/out.txt
