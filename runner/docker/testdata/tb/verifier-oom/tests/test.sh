# The verifier itself is heavy (a test suite loading fixtures).
if python3 -c "fixtures = bytearray(96 * 1024 * 1024); print('tests passed')"; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
