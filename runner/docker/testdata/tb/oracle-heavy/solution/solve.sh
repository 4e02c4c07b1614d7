cd /app
echo solving
python3 -c "x = bytearray(96 * 1024 * 1024); open('/app/out.txt', 'w').write('done')"
echo finished
