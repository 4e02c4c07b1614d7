if [ "$PARITY_LEVEL" = info ] && [ "$PARITY_KEY" = parity-key-from-the-host ]; then
  echo 1 > /logs/verifier/reward.txt
else
  echo "level=$PARITY_LEVEL" ; echo 0 > /logs/verifier/reward.txt
fi
