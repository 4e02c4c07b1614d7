echo done > /app/out.txt
