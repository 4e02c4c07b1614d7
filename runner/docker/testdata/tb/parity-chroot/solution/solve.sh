set -e
chroot / true
mknod /tmp/null-copy c 1 3
echo done > /tmp/out.txt
