if [ -s /app/key.txt ] && [ -s /app/instruction-seen.txt ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
echo "verifier saw: $(cat /app/key.txt)"
